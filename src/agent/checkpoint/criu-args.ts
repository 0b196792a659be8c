/**
 * CRIU's command lines for a sandbox (host-facts § Checkpoint / restore). Pure: the flags are
 * where the sandbox's shape meets CRIU, so each one says why it is there. The dump runs as the
 * owner of the sandbox's user namespace, in CRIU's unprivileged mode (criu-credentials.ts), so
 * cgroups stay out of its images; the restore runs as root, in the container's cgroups.
 */

/** Where Sandbar's setup installs CRIU ≥ 4.2 (scripts/setup.sh), run through its own loader. */
export const DEFAULT_CRIU_BINARY = '/opt/sandbar/criu/bin/criu'

/** The name the toolbox bind goes by in an image, mapped back to the toolbox at restore. */
const TOOLBOX_KEY = 'toolbox'
/** The name the boot ID's bind goes by, mapped to the restoring sandbox's own file. */
const BOOT_ID_KEY = 'boot-id'

/** Images, logs and the restore's PID file, all in one directory per checkpoint. */
export const DUMP_LOG = 'dump.log'
export const RESTORE_LOG = 'restore.log'

export interface DumpOptions {
  /** The container's init: CRIU takes it and every process below it. */
  pid: number
  imagesDir: string
  /** The container's root as the host sees it (its overlay mount). */
  rootfs: string
  /** The container's freezer cgroup: CRIU freezes the whole tree at once through it. */
  freezerCgroup: string
  /** Where the toolbox appears inside the sandbox (read-only bind from the host). */
  toolboxMountPoint: string
  /** Where the sandbox's boot ID is bound from a host file (oci-spec.ts), if it is. */
  bootIdMountPoint?: string | undefined
  /** Descriptors' files outside the sandbox's root (externalFileKey), handed back at restore. */
  externalFiles: readonly string[]
  /** A snapshot's dump: the processes go on after it (else CRIU ends them). */
  leaveRunning?: boolean
}

export function dumpArgs(options: DumpOptions): string[] {
  return [
    'dump',
    ...['--tree', String(options.pid)],
    ...['--images-dir', options.imagesDir],
    ...['--log-file', DUMP_LOG, '-v4'],
    ...['--root', options.rootfs],
    ...['--freeze-cgroup', options.freezerCgroup],
    // The netns is made anew at restore and wired by the agent (restore's setup-namespaces
    // hook), so its links and addresses stay out of the image; its sockets are in it.
    ...['--empty-ns', 'net'],
    ...['--external', `mnt[${options.toolboxMountPoint}]:${TOOLBOX_KEY}`],
    // Its file is in the sandbox's own directory, which a sandbox started from a snapshot
    // does not have: by name, not by path.
    ...(options.bootIdMountPoint === undefined
      ? []
      : ['--external', `mnt[${options.bootIdMountPoint}]:${BOOT_ID_KEY}`]),
    // The runtime's binds of host files (/dev/null over masked /proc files, the devices).
    ...['--ext-mount-map', 'auto'],
    ...options.externalFiles.flatMap((key) => ['--external', key]),
    // Established connections are dumped so that the restore can close them (tcp-close):
    // clients reconnect, as they do after E2B's resume.
    '--tcp-established',
    // Connections that reached a listening socket while the sandbox was frozen, not yet
    // accepted, are dropped with the others: their clients retry.
    '--skip-in-flight',
    '--file-locks',
    '--unprivileged',
    ...(options.leaveRunning === true ? ['--leave-running'] : []),
  ]
}

export interface RestoreOptions {
  imagesDir: string
  rootfs: string
  /** The toolbox directory on the host, bound where the image had it. */
  toolboxDir: string
  /** The restoring sandbox's boot ID file, bound where the image had the dumped one's. */
  bootIdFile?: string | undefined
  /** Descriptors open in CRIU (inherited by it) that stand in for the image's external files. */
  inheritFds: readonly { fd: number; key: string }[]
  /** Run at each restore stage; at setup-namespaces the agent wires the new netns. */
  actionScript: string
  pidFile: string
}

export function restoreArgs(options: RestoreOptions): string[] {
  return [
    'restore',
    ...['--images-dir', options.imagesDir],
    ...['--log-file', RESTORE_LOG, '-v4'],
    ...['--root', options.rootfs],
    ...['--empty-ns', 'net'],
    ...['--ext-mount-map', `${TOOLBOX_KEY}:${options.toolboxDir}`],
    ...(options.bootIdFile === undefined
      ? []
      : ['--ext-mount-map', `${BOOT_ID_KEY}:${options.bootIdFile}`]),
    ...['--ext-mount-map', 'auto'],
    ...options.inheritFds.flatMap(({ fd, key }) => ['--inherit-fd', `fd[${fd}]:${key}`]),
    // The output log's mode differs while the restore reopens it (sandbox-checkpoint.ts).
    '--skip-file-rwx-check',
    '--tcp-close',
    '--file-locks',
    ...['--action-script', options.actionScript],
    // CRIU returns once the tree runs, which is reparented to the host's init like any
    // container's; the PID file names its init.
    '--restore-detached',
    ...['--pidfile', options.pidFile],
    // The dump has no cgroups (unprivileged), and the tree starts in CRIU's own: the caller
    // starts CRIU inside the container's cgroups.
    '--manage-cgroups=ignore',
  ]
}

/** CRIU's name for a descriptor's file it cannot reach from the dumped tree's mounts. */
export function externalFileKey(mountID: number, inode: number): string {
  return `file[${mountID.toString(16)}:${inode.toString(16)}]`
}
