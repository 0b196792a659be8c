import { netnsSysfsDir } from './netns-sysfs.js'
import type { ContainerSpec } from './runtime.js'
import { defaultSeccompProfile, type SeccompProfile } from './seccomp-profile.js'

/** What a runtime can take from the spec; runsc cannot take all of it (host-facts § gVisor). */
export interface OciSpecOptions {
  /** Give the container its own user namespace with the spec's ID map. */
  userNamespace: boolean
  /** Set a pids limit in the container's cgroup. */
  pidsLimit: boolean
  /**
   * The runtime is its own kernel (gVisor's sentry), so its sysfs is its own too: it mounts one
   * in a user namespace, where a host kernel refuses, and a bind would show the host's /sys.
   */
  ownKernel: boolean
}

export const fullOciSpecOptions: OciSpecOptions = {
  userNamespace: true,
  pidsLimit: true,
  ownKernel: false,
}

/** Where the kernel shows the ID of the running boot, the host's unless a bind says otherwise. */
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id'

interface OciMount {
  destination: string
  type: string
  source: string
  options?: string[]
}

/** The OCI runtime-spec 1.0.2 config.json subset Sandbar writes. */
export interface OciSpec {
  ociVersion: string
  root: { path: string; readonly: boolean }
  process: {
    terminal: boolean
    user: { uid: number; gid: number }
    args: string[]
    env: string[]
    cwd: string
    noNewPrivileges: boolean
    capabilities: Record<'bounding' | 'effective' | 'permitted' | 'inheritable', string[]>
    rlimits: { type: string; hard: number; soft: number }[]
  }
  hostname: string
  mounts: OciMount[]
  annotations?: Record<string, string>
  linux: {
    namespaces: { type: string; path?: string }[]
    uidMappings?: { containerID: number; hostID: number; size: number }[]
    gidMappings?: { containerID: number; hostID: number; size: number }[]
    resources: {
      cpu: { shares: number; quota: number; period: number }
      memory: { limit: number; swap: number }
      pids?: { limit: number }
    }
    cgroupsPath: string
    maskedPaths: string[]
    readonlyPaths: string[]
    seccomp: SeccompProfile
  }
}

/**
 * Docker's default capability set less CAP_NET_RAW: what a root process in a container usually
 * needs, no more. The sandbox's user namespace owns its netns (user-namespace.ts), so NET_RAW
 * there would let root inside forge packets with another sandbox's address. Without it raw
 * sockets stay refused, as they were when the host's user namespace owned the netns.
 */
export const DEFAULT_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
]

/** Docker's default masked paths: kernel state a container must not read. */
export const MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
]

/** Docker's default read-only paths: kernel knobs a container may read but not turn. */
export const READONLY_PATHS = [
  '/proc/bus',
  '/proc/fs',
  '/proc/irq',
  '/proc/sys',
  '/proc/sysrq-trigger',
]

/**
 * RLIMIT_NOFILE of every process in a sandbox, soft and hard alike: enough for builds, bundlers
 * and servers with many connections, and far below the service's own (a sandbox otherwise
 * inherits it; one held 398k files). It cannot be raised inside: that needs CAP_SYS_RESOURCE in
 * the host's user namespace. The runtime sets it inside the sandbox's user namespace, so it must
 * not exceed the service's own hard limit (20000 on the machines we measured, where the service
 * also lacks CAP_SYS_RESOURCE to raise it; systemd's default is 524288). Per process, not per
 * sandbox: the memory limit bounds the kernel memory a sandbox's open files take in all.
 */
export const SANDBOX_NOFILE = 16_384

/**
 * RLIMIT_NOFILE, and RLIMIT_CORE 0 with hard 0: a crash inside writes no core dump where the
 * host's `kernel.core_pattern` says (a file on the sandbox's disk, or a pipe to the host's
 * crash handler, which a sandbox must not feed), and the sandbox cannot turn it back on.
 * RLIMIT_NPROC is left alone: the kernel counts it per uid, charged up the user namespace tree,
 * not per sandbox; the pids cgroup bounds each sandbox, and the agent's parent all of them.
 */
const RLIMITS = [
  { type: 'RLIMIT_NOFILE', hard: SANDBOX_NOFILE, soft: SANDBOX_NOFILE },
  { type: 'RLIMIT_CORE', hard: 0, soft: 0 },
]

/** The kernel's default CPU weight of a cgroup (cpu.shares on v1), per CPU of a sandbox. */
const CPU_SHARES_PER_CPU = 1024

const CPU_PERIOD_US = 100_000
const MIB = 1024 * 1024

/** Builds config.json for one sandbox (OCI runtime-spec 1.0.2). Pure. */
export function buildOciSpec(
  spec: ContainerSpec,
  options: OciSpecOptions = fullOciSpecOptions,
): OciSpec {
  const memory = spec.resources.memoryMB * MIB
  const capabilities = [...DEFAULT_CAPABILITIES]
  return {
    ociVersion: '1.0.2',
    // Writable: the root is the sandbox's overlay, whose upper directory takes the writes.
    root: { path: spec.rootfs, readonly: false },
    process: {
      // No terminal: PID 1 is an init with envd, and `run -d` needs detached stdio (host-facts).
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: spec.process.args,
      env: Object.entries(spec.process.env).map(([key, value]) => `${key}=${value}`),
      cwd: spec.process.cwd,
      // sudo inside the sandbox needs setuid to raise privileges; the user namespace bounds them.
      noNewPrivileges: false,
      capabilities: {
        bounding: capabilities,
        effective: capabilities,
        permitted: capabilities,
        inheritable: [],
      },
      rlimits: RLIMITS,
    },
    hostname: spec.hostname,
    mounts: [
      ...baseMounts(spec, options),
      ...bootIdMounts(spec),
      ...spec.readonlyBinds.map(readonlyBind),
      ...(spec.volumeBinds ?? []).map(volumeBind),
    ],
    linux: {
      namespaces: namespaces(spec, options),
      ...(options.userNamespace ? idMappings(spec) : {}),
      resources: {
        cpu: {
          // Under contention sandboxes share their parent's CPU in proportion to their size.
          shares: spec.resources.cpuCount * CPU_SHARES_PER_CPU,
          // cpuCount whole CPUs: that many periods of CPU time per period (CFS bandwidth).
          quota: spec.resources.cpuCount * CPU_PERIOD_US,
          period: CPU_PERIOD_US,
        },
        // swap (memory+swap in OCI) equal to the limit: no swap, so a hog is OOM-killed inside.
        memory: { limit: memory, swap: memory },
        ...(options.pidsLimit ? { pids: { limit: spec.resources.pids } } : {}),
      },
      cgroupsPath: spec.cgroupsPath,
      maskedPaths: MASKED_PATHS,
      readonlyPaths: READONLY_PATHS,
      seccomp: defaultSeccompProfile(options),
    },
  }
}

function namespaces(spec: ContainerSpec, options: OciSpecOptions): OciSpec['linux']['namespaces'] {
  return [
    ...(options.userNamespace ? [userNamespace(spec, options)] : []),
    { type: 'pid' },
    { type: 'mount' },
    { type: 'ipc' },
    { type: 'uts' },
    { type: 'cgroup' },
    // Joined, not created: the network role made the netns with its veth beforehand.
    { type: 'network', path: spec.netnsPath },
  ]
}

function userNamespace(
  spec: ContainerSpec,
  options: OciSpecOptions,
): OciSpec['linux']['namespaces'][number] {
  // Joined when the agent made it (owned by a host UID of the sandbox's own, see
  // user-namespace.ts); crun and runc then keep its maps, which equal the spec's. A runtime
  // with its own kernel makes its own: runsc's gofer fails to join one ("invalid argument":
  // setns into a user namespace needs a single-threaded caller), and gVisor's inotify is the
  // sentry's, not the host's.
  return spec.userNamespacePath === undefined || options.ownKernel
    ? { type: 'user' }
    : { type: 'user', path: spec.userNamespacePath }
}

function idMappings(spec: ContainerSpec): Pick<OciSpec['linux'], 'uidMappings' | 'gidMappings'> {
  // Root inside is an unprivileged host range (host-facts § user namespaces).
  const mapping = [{ containerID: 0, hostID: spec.idMap.hostID, size: spec.idMap.size }]
  return { uidMappings: mapping, gidMappings: mapping }
}

function baseMounts(spec: ContainerSpec, options: OciSpecOptions): OciMount[] {
  return [
    { destination: '/proc', type: 'proc', source: 'proc' },
    {
      destination: '/dev',
      type: 'tmpfs',
      source: 'tmpfs',
      options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'],
    },
    {
      destination: '/dev/pts',
      type: 'devpts',
      source: 'devpts',
      // gid 5 (tty) is inside the ID map; a fresh instance keeps the host's ptys out of sight.
      options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
    },
    {
      destination: '/dev/shm',
      type: 'tmpfs',
      source: 'shm',
      options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'],
    },
    {
      destination: '/dev/mqueue',
      type: 'mqueue',
      source: 'mqueue',
      options: ['nosuid', 'noexec', 'nodev'],
    },
    sysMount(spec, options),
    {
      destination: '/run',
      type: 'tmpfs',
      source: 'tmpfs',
      options: ['nosuid', 'nodev', 'mode=755'],
    },
  ]
}

/** Whether the runtime must mount the sandbox's sysfs on the host first (netns-sysfs.ts). */
export function needsNetnsSysfs(options: OciSpecOptions): boolean {
  return options.userNamespace && !options.ownKernel
}

function sysMount(spec: ContainerSpec, options: OciSpecOptions): OciMount {
  if (!needsNetnsSysfs(options)) {
    return {
      destination: '/sys',
      type: 'sysfs',
      source: 'sysfs',
      options: ['nosuid', 'noexec', 'nodev', 'ro'],
    }
  }
  // A user namespace may mount sysfs only for a netns it owns; the joined netns belongs to the
  // host's user namespace (the network role made it). The runtime mounts a sysfs for that netns
  // from the host and this binds it, not the host's /sys: /sys/class/net lists the sandbox's
  // own lo and eth0, never the host's interfaces or another sandbox's veth and its counters, and
  // none of the host's submounts (cgroup hierarchies naming every sandbox, debugfs) come along.
  return {
    destination: '/sys',
    type: 'bind',
    source: netnsSysfsDir(spec.bundleDir),
    options: ['bind', 'nosuid', 'noexec', 'nodev', 'ro'],
  }
}

function bootIdMounts(spec: ContainerSpec): OciMount[] {
  if (spec.bootIdFile === undefined) return []
  // Read-only to the sandbox twice over: the bind, and the file itself (host root's, 0444),
  // which root inside cannot override, its user namespace not mapping host root. The file's
  // mode is what holds: crun makes /proc/sys read-only with a recursive bind of it, and that
  // copies this bind writable.
  return [
    {
      destination: BOOT_ID_PATH,
      type: 'bind',
      source: spec.bootIdFile,
      options: ['bind', 'ro', 'nosuid', 'nodev', 'noexec'],
    },
  ]
}

function readonlyBind(bind: ContainerSpec['readonlyBinds'][number]): OciMount {
  // rbind: the toolbox may hold mounts of its own. nosuid/nodev: it has no setuid programs or
  // devices, and a read-only remount in a user namespace keeps flags the source has locked.
  return {
    destination: bind.destination,
    type: 'bind',
    source: bind.source,
    options: ['rbind', 'ro', 'nosuid', 'nodev'],
  }
}

function volumeBind(bind: NonNullable<ContainerSpec['volumeBinds']>[number]): OciMount {
  // bind, not rbind: the source is one idmapped mount, whose idmap the bind copies. nosuid and
  // nodev as the source has them; the container's user namespace cannot clear either (the
  // kernel locks them in a mount namespace it owns), so no sandbox plants a setuid program or
  // a device for another.
  return {
    destination: bind.destination,
    type: 'bind',
    source: bind.source,
    options: ['bind', 'rw', 'nosuid', 'nodev'],
  }
}
