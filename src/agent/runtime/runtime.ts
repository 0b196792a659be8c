/** The OCI runtimes Sandbar drives (DESIGN.md: crun default, runc fallback, runsc hardened). */
export const RUNTIME_NAMES = ['crun', 'runc', 'runsc'] as const
export type RuntimeName = (typeof RUNTIME_NAMES)[number]

/** Everything needed to run one sandbox's container; `oci-spec.ts` turns it into config.json. */
export interface ContainerSpec {
  /** OCI container ID. */
  id: string
  /** Directory that receives config.json (the OCI bundle). */
  bundleDir: string
  /** File the init's stdout and stderr are appended to (envd's log). */
  outputFile: string
  /** The mounted root filesystem (host path of the overlay). */
  rootfs: string
  /** Read-only bind mounts into the container (the toolbox). */
  readonlyBinds: { source: string; destination: string }[]
  /**
   * Read-write bind mounts into the container, mounted after every other, in this order: the
   * sandbox's volumes, each source an idmapped mount of its own (volume-stage.ts).
   */
  volumeBinds?: { source: string; destination: string }[]
  /** Network namespace to join, e.g. `/run/netns/<name>`. */
  netnsPath: string
  /** OCI `cgroupsPath`. */
  cgroupsPath: string
  /** Container uid/gid 0 maps to this host ID, for `size` IDs (a user namespace). */
  idMap: { hostID: number; size: number }
  /** A user namespace with that map made beforehand, to join instead of making one. */
  userNamespacePath?: string
  hostname: string
  resources: { cpuCount: number; memoryMB: number; pids: number }
  /** PID 1 of the container. */
  process: { args: string[]; env: Record<string, string>; cwd: string }
  /** An open file PID 1 inherits as its stdin (envd's handover); /dev/null when unset. */
  initStdin?: number
  /**
   * A file that holds the sandbox's boot ID, bound over the kernel's (oci-spec.ts
   * BOOT_ID_PATH): each sandbox reads its own, where the host kernel shows every one the
   * host's, and a VM's kernel a new one at each boot. Only for a runtime without the
   * `ownBootId` gap: runc refuses the bind.
   */
  bootIdFile?: string
}

export type ContainerStatus = 'creating' | 'created' | 'running' | 'paused' | 'stopped'

export interface ContainerState {
  id: string
  status: ContainerStatus
  /** Host PID of the container's init; 0 when stopped. */
  pid: number
}

/** Behaviours crun and runc have under a spec that another runtime lacks (runsc, host-facts). */
export type RuntimeGap =
  /** The container's processes are host processes, with the spec's capabilities. */
  | 'hostProcesses'
  /** A pids limit is written and holds a fork loop without stopping the container. */
  | 'pidsLimit'
  /** The kernel OOM-kills a hog inside the container and the container lives on. */
  | 'oomKillInside'
  /** A refused syscall answers with the errno the seccomp profile names (ENOSYS or EPERM). */
  | 'seccompErrno'
  /** The container reads the boot ID it is given (ContainerSpec.bootIdFile). */
  | 'ownBootId'

/** What a runtime lacks, each with the measurement that showed it. */
export type RuntimeGaps = Partial<Record<RuntimeGap, string>>

/**
 * What CRIU needs from the runtime to checkpoint a container's processes and hand the restored
 * ones back to it (checkpoint/sandbox-checkpoint.ts): CRIU itself does the dump and restore.
 */
export interface ContainerCheckpoints {
  /** The container's init and the cgroup directory CRIU freezes the container with. */
  target(id: string): Promise<{ pid: number; freezerCgroup: string }>
  /** Makes `pid`, CRIU's restored init, the container's init in the runtime's own state. */
  restored(id: string, pid: number): Promise<void>
}

/** One OCI runtime, driven through its CLI with its own `--root` state directory. */
export interface Runtime {
  readonly name: RuntimeName
  readonly gaps: RuntimeGaps
  /**
   * Writes the bundle and starts the container detached; resolves once its init runs, with the
   * init's PID (on the host).
   */
  run(spec: ContainerSpec): Promise<number>
  /** The container's state, or undefined when the runtime does not know it. */
  state(id: string): Promise<ContainerState | undefined>
  /** All containers in this runtime's state directory. */
  list(): Promise<ContainerState[]>
  /** Freezes every process of the container (cgroup freezer). */
  pause(id: string): Promise<void>
  resume(id: string): Promise<void>
  /** Stops the container (SIGKILL to all its processes) and deletes it; unknown IDs are fine. */
  remove(id: string): Promise<void>
  /** Present where the runtime's state can take a restored container (crun). */
  readonly checkpoints?: ContainerCheckpoints
}
