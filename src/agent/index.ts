import type { Logger } from '../logger.js'
import type { UnreachableNetwork } from './network/closed-networks.js'
import type { EgressPolicy } from './network/network.js'
import type { UpperChange as SandboxChange } from './rootfs/upper-changes.js'
import { RUNTIME_NAMES, type RuntimeName } from './runtime/runtime.js'
import type { SandboxUsage } from './sandbox-usage.js'
import type { VolumeFiles } from './volumes/volume-files.js'

export {
  AgentError,
  SandboxNotFoundError,
  SandboxStateError,
  TemplateNotFoundError,
  VolumeMountError,
} from './errors.js'
/** Host tools, for the builder, which runs beside the agent on its host (skopeo, mmdebstrap). */
export { type HostCommandOptions, runHostCommand } from './host-command.js'
/** The host name every sandbox has; templates name it in /etc/hosts. */
export { SANDBOX_HOSTNAME } from './host-names.js'
/**
 * How many sandboxes the host holds (`sandbar serve`'s default `--max-sandboxes`), and the
 * memory it keeps for itself, below which paused sandboxes hibernate early.
 */
export {
  chooseMaxSandboxes,
  HOST_MEMORY_RESERVE_MB,
  type MaxSandboxesChoice,
  readHostResources,
} from './limits/sandbox-capacity.js'
/** Which destinations no allowOut opens, shared with the api so it can name the reason. */
export {
  findUnreachableEntry,
  type UnreachableEntry,
  type UnreachableNetwork,
} from './network/closed-networks.js'
/** Egress rule parsing, shared with the api so bad rules are a 400 before anything starts. */
export {
  ALL_TRAFFIC,
  type EgressList,
  EgressPolicyError,
  type ParsedEgressPolicy,
  parseEgressPolicy,
} from './network/egress-policy.js'
export { toolboxNodeArgv } from './rootfs/toolbox.js'
export type { UpperChange as SandboxChange } from './rootfs/upper-changes.js'
export { cpuUsedPercent, type SandboxUsage } from './sandbox-usage.js'
export type { VolumeEntry, VolumeEntryType } from './volumes/volume-entry.js'
/** Volume content errors, for the content API to answer with (wave2-contracts §2.3). */
export {
  VolumePathError,
  type VolumePathErrorKind,
} from './volumes/volume-errors.js'
export type {
  CreateOptions as VolumeCreateOptions,
  EntryAttributes as VolumeEntryAttributes,
  OpenedFile as VolumeOpenedFile,
  VolumeFiles,
} from './volumes/volume-files.js'
/** Where volumes may be mounted, shared with the api so a bad path is a 400 before anything starts. */
export {
  type VolumeMountPathProblem,
  volumeMountPathProblems,
} from './volumes/volume-mount-path.js'
export type { EgressPolicy, RuntimeName }
export { RUNTIME_NAMES }

/** How an agent runs sandboxes on this host. */
export interface AgentConfig {
  /** Where records, upper layers, bundles and the toolbox live (default /var/lib/sandbar). */
  dataDir: string
  /** Where template layers are cached, in `<dir>/layers/` (default: the data directory). */
  templatesDir?: string
  /** Prefix of every host object the agent makes (2–5 chars; see host-names.ts). */
  prefix: string
  runtime: RuntimeName
  /** Path of the runtime binary, when not on PATH under its own name. */
  runtimeBinary?: string
  /** IPv4 pool that sandbox /30 networks come from. */
  addressPool: string
  /** Masquerade sandbox traffic to the internet; off, it never leaves the host's uplink. */
  masquerade: boolean
  /**
   * Masquerade build sandboxes' traffic even when `masquerade` is off (default: as
   * `masquerade`): template steps such as `aptInstall` need the package registries.
   */
  masqueradeBuilds?: boolean
  /** Process limit per sandbox. */
  pidsLimit: number
  /**
   * How long a new sandbox's envd may take to answer (default 15 s); an emulated host, such as
   * the cgroup-v2 tests' guest, needs longer.
   */
  envdStartTimeoutMs?: number
  /** CRIU ≥ 4.2, which hibernates paused sandboxes (default: where scripts/setup.sh puts it). */
  criuBinary?: string
  /** How many sandboxes may run at once; the host's limits are checked against it at start. */
  maxSandboxes?: number
  /** KSM shares envd's memory across sandboxes (memory-merging.ts); default off. */
  shareEnvdMemory?: boolean
  /**
   * scripts/build.mjs's output directory: the built envd (`<dir>/envd/envd.cjs`) and the
   * agent's `idmapped-mount` helper.
   */
  envdBuildDir: string
  logger: Logger
}

/** The template a sandbox starts from: a ready build's layers and envd defaults (§2.4). */
export interface SandboxTemplate {
  templateID: string
  /** Layer IDs in the agent's layer store, lowest first. */
  layers: string[]
  defaultUser: string
  /** Empty: each process starts in its user's home. */
  defaultWorkdir: string
  /** Started in the background once envd answers; create returns when `readyCmd` succeeds. */
  startCmd?: string
  /** Retried every 2 s until it exits 0 (§2.5); default `sleep 20` with a start command. */
  readyCmd?: string
  /**
   * A snapshot's (Agent.snapshot): the sandbox starts with the snapshot's processes restored
   * instead of a new envd, over `layers` as the snapshot reported them (its files on top). The
   * start and ready commands are not run: their processes are among the restored.
   */
  snapshotID?: string
}

/** What a boot of a sandbox needs of its template beside the layers. */
export type BootSettings = Pick<
  SandboxTemplate,
  'defaultUser' | 'defaultWorkdir' | 'startCmd' | 'readyCmd'
>

/** What Agent.snapshot made of a sandbox. */
export interface SnapshotReport {
  /** The layers a sandbox from the snapshot starts from: the source's, then its files. */
  layers: string[]
  /** How long the source's processes were frozen for it. */
  frozenMs: number
  /** The size of its process images on disk. */
  imageBytes: number
}

/**
 * A volume in a sandbox (DESIGN.md: a host directory owned by the service): `hostDir` appears
 * read-write at `path`, live-shared with every other sandbox mounting it and with the host,
 * nodev and nosuid. Files on it carry the sandbox's own IDs as stored IDs (0 is the sandbox's
 * root, 1000 its `user`), whichever sandbox mounts it.
 */
export interface VolumeMount {
  /** Absolute inside the sandbox, without '.' or '..' components (volumeMountPathProblems). */
  path: string
  /**
   * The volume's mount point on the host, as the mount table names it (absolute, no symlink
   * along the way), of a file system that takes idmapped mounts (ext4, XFS, btrfs, tmpfs; not
   * overlayfs, NFS or 9p). Anything else is refused: an unmounted volume's directory lies on
   * the host's own file system, and a directory inside a volume is one a sandbox may swap for
   * a symlink.
   */
  hostDir: string
}

/** What `create` needs to start one sandbox. */
export interface SandboxRequest {
  sandboxID: string
  template: SandboxTemplate
  /**
   * A builder's sandbox: it resolves names through the host's resolver (apt and npm in build
   * steps), while ordinary sandboxes get none.
   */
  build?: boolean
  /** A warm pool's: envd's first-command path is taken before create answers. */
  warm?: boolean
  cpuCount: number
  memoryMB: number
  /** Size of the sandbox's own disk (its writes, files and output), in MiB. */
  diskSizeMB: number
  /** Default env vars of user processes (`/init` envVars). */
  envVars: Record<string, string>
  /** envd access token; unset = envd open to anyone who reaches it. */
  accessToken?: string
  egress: EgressPolicy
  /**
   * Volumes mounted from the start (a path volumeMountPathProblems refuses is a
   * VolumeMountError); a running sandbox takes no new ones, so a create with volumes starts
   * cold.
   */
  volumeMounts?: VolumeMount[]
}

/** What a client's create sets in a sandbox started before it came (`Agent.claim`). */
export type SandboxClaim = Pick<SandboxRequest, 'envVars' | 'accessToken' | 'egress'>

export type SandboxState = 'running' | 'paused'

/** A sandbox as the agent reports it. */
export interface SandboxInfo {
  sandboxID: string
  templateID: string
  /** The template layers it started from, lowest first. */
  layers: string[]
  /** A warm pool's sandbox that no client has claimed: it survives restarts to be adopted. */
  waiting: boolean
  state: SandboxState
  /** A paused sandbox's processes are on disk (Agent.hibernate), not frozen in memory. */
  hibernated: boolean
  /** A paused sandbox has no processes, only its files: its resume boots it. */
  filesOnly: boolean
  /** The disk a hibernated sandbox's checkpoint takes, in bytes. */
  checkpointBytes?: number
  runtime: RuntimeName
  cpuCount: number
  memoryMB: number
  /** The sandbox's own address, and envd's URL at it (reachable from this host). */
  address: string
  envdURL: string
  createdAt: Date
}

/** Lines a sandbox's init and envd wrote (their log), and where the next read starts. */
export interface SandboxOutput {
  lines: string[]
  /** Byte offset after the last line returned. */
  bytesRead: number
}

/** Template layers by ID (content addresses the builder chooses): `<templates dir>/layers/`. */
export interface LayerStore {
  has(layerID: string): Promise<boolean>
  /**
   * Makes layer `layerID` from the tree `fill` writes into an empty directory (owners as the
   * image has them). Atomic: a crash leaves no half layer, and the next start removes the rest.
   */
  add(layerID: string, fill: (dir: string) => Promise<void>): Promise<void>
  /**
   * Makes layer `layerID` hold what the stack `layerIDs` (lowest first) shows, whiteouts
   * applied: one layer where a deep stack would make every sandbox's mount long.
   */
  squash(layerIDs: readonly string[], layerID: string): Promise<void>
  /** Removes every layer neither in `keep` nor used by a sandbox; returns the removed IDs. */
  collect(keep: ReadonlySet<string>): Promise<string[]>
}

/** How much of a volume's filesystem is in use, by statfs. */
export interface VolumeUsage {
  usedMB: number
  /** What a write may still take before it fails with "no space". */
  availableMB: number
}

/**
 * Volumes on this host (issue 15): each a sparse ext4 image of its size, loop-mounted
 * `nodev,nosuid,noatime` at `directory(volumeID)`, whose root is 0777 and owned 0:0. The
 * filesystem's size is the volume's quota (writes past it fail with ENOSPC); its journal keeps
 * it through a host crash. The agent mounts every volume it finds when it starts; `close`
 * leaves them mounted, as it leaves sandboxes running.
 */
export interface Volumes {
  /** Makes and mounts a new, empty volume of `sizeMB` MiB (at least 16). */
  create(volumeID: string, sizeMB: number): Promise<void>
  /**
   * Unmounts the volume and removes its data, unless a sandbox still mounts it (a bind of its
   * directory in a sandbox's mount namespace, running or paused): then only this host's mount
   * goes and the call answers false, to be made again later; the kernel keeps the filesystem
   * for that sandbox meanwhile.
   */
  remove(volumeID: string): Promise<boolean>
  usage(volumeID: string): Promise<VolumeUsage>
  /**
   * The host directory where the volume is mounted: what a sandbox's volume mount binds
   * (with the sandbox's ID mapping). Throws for a string that is not a volume ID.
   */
  directory(volumeID: string): string
  /** The IDs of the volumes on this host (deleted ones still held by a sandbox included). */
  list(): Promise<string[]>
  /**
   * The volume's content for the content API: every operation stays inside the volume, never
   * following a symlink or `..` out of it, whatever its sandboxes do meanwhile.
   */
  files(volumeID: string): VolumeFiles
}

/** What reconcile found at start and did about it. */
export interface ReconcileReport {
  adopted: string[]
  removed: string[]
}

/**
 * The agent role (DESIGN.md): turns "start a sandbox from template T with these settings"
 * into an isolated container with envd answering, and pauses, resumes, updates and removes
 * it. Sandboxes survive the agent: `close` leaves them running and the next agent adopts them.
 */
export interface Agent {
  create(request: SandboxRequest): Promise<SandboxInfo>
  get(sandboxID: string): Promise<SandboxInfo | undefined>
  list(): Promise<SandboxInfo[]>
  /**
   * Freezes every process of the sandbox (cgroup freezer); memory stays. Without `keepMemory`
   * its processes end and its files stay, synced to its disk: its resume boots it anew.
   */
  pause(sandboxID: string, options?: { keepMemory?: boolean }): Promise<void>
  /**
   * Moves a paused sandbox's processes from memory to disk (CRIU), freeing its memory; it
   * survives a restart of the agent or of the host, and resume restores it.
   */
  hibernate(sandboxID: string): Promise<void>
  /**
   * Thaws a paused sandbox, or restores a hibernated one, with its processes as they were; one
   * paused without memory boots over its files. With `reboot` every paused sandbox boots over
   * its files, whatever processes it kept ending first.
   */
  resume(sandboxID: string, options?: { reboot?: boolean }): Promise<void>
  /**
   * Hands a running sandbox started ahead of its client (a warm pool's) to that client: envd
   * takes the request's env vars and access token, the network its egress rules.
   */
  claim(sandboxID: string, claim: SandboxClaim): Promise<void>
  /**
   * Checkpoints a running sandbox in place as snapshot `snapshotID` ([a-z0-9-], the caller's
   * choice): its files become layer `layerID` and its processes CRIU images. The sandbox is
   * frozen meanwhile and runs on after. A create whose template names the snapshot starts
   * from it. A paused sandbox, or one on runc or runsc, is refused (SandboxStateError); one
   * with volumes fails in CRIU, so callers refuse it first.
   */
  snapshot(sandboxID: string, snapshotID: string, layerID: string): Promise<SnapshotReport>
  /** Removes a snapshot's process images (its layer goes with layer collection); idempotent. */
  removeSnapshot(snapshotID: string): Promise<void>
  /** The IDs of the snapshots on this host, those a crash left half-made included. */
  snapshots(): Promise<string[]>
  /** Replaces the egress rules of a running sandbox, live. */
  updateNetwork(sandboxID: string, egress: EgressPolicy): Promise<void>
  /**
   * What no sandbox reaches whatever its egress rules say (the address pool, the host's own
   * addresses, where the api and proxy listen), read from the host at each call. The agent's
   * rules drop these first; callers use the list to refuse such rules with a reason.
   */
  unreachableNetworks(): Promise<UnreachableNetwork[]>
  /**
   * What the sandbox changed against its template, from its overlay's upper layer, in path
   * order (a Sandbar extension: `GET /sandboxes/{id}/changes`).
   */
  changes(sandboxID: string): Promise<SandboxChange[]>
  /** The same changes as a tar stream in OCI layer form (upper-changes.ts). */
  changesArchive(sandboxID: string): Promise<AsyncIterable<Uint8Array>>
  /** The complete lines of the sandbox's output from byte `from` on (a bounded amount). */
  readOutput(sandboxID: string, from: number): Promise<SandboxOutput>
  /**
   * What a running sandbox uses now, read on the host (its cgroups and disk), which costs its
   * envd nothing; undefined when it is not running or its runtime keeps its cgroups.
   */
  usage(sandboxID: string): Promise<SandboxUsage | undefined>
  /** Removes the sandbox and everything it had on the host. */
  kill(sandboxID: string): Promise<void>
  /**
   * Ends the sandbox's processes, keeps what it wrote as layer `layerID` (owners as the image
   * has them, whiteouts included), then removes the sandbox. How a build step becomes a layer.
   */
  commit(sandboxID: string, layerID: string): Promise<void>
  /** The template layers on this host. */
  readonly layers: LayerStore
  /** The volumes on this host. */
  readonly volumes: Volumes
  /** What reconcile did when this agent started. */
  readonly reconciled: ReconcileReport
  /** Stops the agent; sandboxes keep running. */
  close(): Promise<void>
}

export { createAgent } from './create-agent.js'
