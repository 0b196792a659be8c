import { randomBytes } from 'node:crypto'
import { chmod, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { elapsedMs } from '../elapsed-ms.js'
import { KeyedQueue } from '../keyed-queue.js'
import type { Logger } from '../logger.js'
import { isProcessRunning } from '../process-alive.js'
import {
  checkpointDir,
  checkpointSandbox,
  restoreSandbox,
} from './checkpoint/sandbox-checkpoint.js'
import {
  readSnapshotSource,
  removeSnapshot,
  restoreSnapshot,
  snapshotIDs,
  snapshotLayers,
  snapshotSandbox,
} from './checkpoint/sandbox-snapshot.js'
import {
  type EnvdInit,
  envdURL,
  initEnvd,
  initLockedEnvd,
  verifyEnvdInit,
  waitForEnvd,
} from './envd-client.js'
import { SandboxNotFoundError, SandboxStateError, TemplateNotFoundError } from './errors.js'
import { runHostCommand } from './host-command.js'
import { hostNames, PREFIX_PATTERN, parentCgroupPath } from './host-names.js'
import type {
  Agent,
  AgentConfig,
  BootSettings,
  EgressPolicy,
  SandboxChange,
  SandboxClaim,
  SandboxInfo,
  SandboxOutput,
  SandboxRequest,
  SnapshotReport,
} from './index.js'
import { checkHostLimits, ensureOwnNofile, readHostLimits } from './limits/host-limits.js'
import { limitParentCgroup, pidsBudget } from './limits/parent-cgroup.js'
import { lowerCpuWeight, restoreCpuWeight } from './limits/waiting-cpu-weight.js'
import { startMemoryMerging } from './memory-merging.js'
import { createAddressPool } from './network/address-pool.js'
import { hostResolvers } from './network/host-resolvers.js'
import { createNetworkManager } from './network/network-manager.js'
import { pathExists } from './path-exists.js'
import { reconcile } from './reconcile.js'
import { BlankDisks } from './rootfs/blank-disks.js'
import { HostLayerStore } from './rootfs/layer-store.js'
import { ensureToolbox } from './rootfs/toolbox.js'
import { upperChanges, upperChangesArchive } from './rootfs/upper-changes.js'
import { copyUpperAsLayer } from './rootfs/upper-layer.js'
import { readCgroupMounts } from './runtime/cgroup-mode.js'
import type { Runtime } from './runtime/runtime.js'
import { RuntimeSet } from './runtime/runtime-set.js'
import {
  type HostParts,
  removeSandboxHost,
  sandboxPaths,
  startSandboxHost,
  stopSandboxHost,
} from './sandbox-host.js'
import { readOutputLines } from './sandbox-output.js'
import { freeSlot, type SandboxRecord, SandboxRecords } from './sandbox-record.js'
import { readSandboxUsage, type SandboxUsage } from './sandbox-usage.js'
import { checkSubordinateIDs } from './subordinate-ids.js'
import { startTemplateCommand, takeFirstCommandPath } from './template-command.js'
import { ID_RANGES, sandboxIDMap } from './user-namespace.js'
import { HostVolumes } from './volumes/host-volumes.js'
import { checkVolumeMounts } from './volumes/volume-mount-path.js'

/** How long a new sandbox's envd may take to answer, unless the config says otherwise. */
const ENVD_START_TIMEOUT_MS = 15_000

/**
 * Starts an agent: prepares the toolbox, the base template and the network table, then
 * reconciles what an earlier agent left on the host.
 */
export async function createAgent(config: AgentConfig): Promise<Agent> {
  if (!PREFIX_PATTERN.test(config.prefix))
    throw new Error(`invalid agent prefix '${config.prefix}'`)
  const logger = config.logger
  // Each /30 of the pool has its own ID range (sandboxIDMap); a wider pool would reuse them.
  const pool = createAddressPool(config.addressPool)
  if (pool.capacity > ID_RANGES) {
    throw new Error(`address pool ${pool.cidr} is wider than a /16: sandboxes would share host IDs`)
  }
  await checkSubordinateIDs()
  const sandboxesDir = path.join(config.dataDir, 'sandboxes')
  // Traversable but not listable: the runtime mounts each rootfs after entering the user
  // namespace, as the sandbox's root (a host ID of its range), which must walk down to it.
  for (const dir of [config.dataDir, sandboxesDir]) {
    await mkdir(dir, { recursive: true })
    await chmod(dir, 0o711)
  }
  const host = await readHostLimits()
  checkHostLimits(host, config, logger)
  await ensureOwnNofile(logger)
  await limitParentCgroup(parentCgroupPath(config.prefix), {
    pidsMax: pidsBudget(host.pidMax, host.threadsMax),
  })
  const network = createNetworkManager({
    prefix: config.prefix,
    addressPool: config.addressPool,
    masquerade: config.masquerade,
    masqueradeBuilds: config.masqueradeBuilds ?? config.masquerade,
    logger,
  })
  await network.init()
  const parts: HostParts = {
    config,
    runtimes: new RuntimeSet({
      dataDir: config.dataDir,
      defaultName: config.runtime,
      defaultBinary: config.runtimeBinary,
      logger,
      helperDir: config.envdBuildDir,
    }),
    network,
    toolbox: await ensureToolbox({
      dataDir: config.dataDir,
      envdBuildDir: config.envdBuildDir,
      shareEnvdMemory: config.shareEnvdMemory === true,
      logger,
    }),
    records: new SandboxRecords(sandboxesDir),
    blankDisks: new BlankDisks(path.join(config.dataDir, 'blank-disks')),
  }
  await parts.blankDisks.open()
  if (config.shareEnvdMemory === true) await startMemoryMerging(parts.toolbox, logger)
  const layers = new HostLayerStore(
    path.join(config.templatesDir ?? config.dataDir, 'layers'),
    async () => {
      const records = await parts.records.all()
      return new Set([
        ...records.flatMap(({ record }) => record?.layers ?? []),
        ...(await snapshotLayers(parts)),
      ])
    },
    logger,
  )
  await layers.open()
  const volumes = new HostVolumes(path.join(config.dataDir, 'volumes'), logger)
  await volumes.open()
  const reconciled = await reconcile(parts, logger)
  return new HostAgent(parts, layers, volumes, reconciled)
}

class HostAgent implements Agent {
  /** One operation at a time per sandbox, so pause never races kill. */
  private readonly operations = new KeyedQueue()
  /** Slot choices, one at a time: two creates must never take the same network slot. */
  private reservations: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly parts: HostParts,
    readonly layers: HostLayerStore,
    readonly volumes: HostVolumes,
    readonly reconciled: Agent['reconciled'],
  ) {}

  async create(request: SandboxRequest): Promise<SandboxInfo> {
    const { template } = request
    const layers = template.layers.map((layerID) => this.layers.path(layerID))
    for (const layer of layers) {
      if (!(await pathExists(layer))) throw new TemplateNotFoundError(template.templateID)
    }
    const { config } = this.parts
    checkVolumeMounts(request.volumeMounts ?? [])
    const snapshot =
      template.snapshotID === undefined
        ? undefined
        : await readSnapshotSource(this.parts, template.snapshotID)
    if (template.snapshotID !== undefined && snapshot === undefined) {
      throw new TemplateNotFoundError(template.templateID)
    }
    return this.exclusive(request.sandboxID, async () => {
      const started = performance.now()
      // Handed to envd at start (see sandbox-host.ts); only `/init` pushes carrying it apply.
      // A snapshot's envd has its source's, and takes this one with its first push.
      const envdControlSecret = randomBytes(32).toString('base64url')
      const record = await this.reserve({
        sandboxID: request.sandboxID,
        templateID: template.templateID,
        layers: template.layers,
        build: request.build,
        warm: request.warm,
        runtime: config.runtime,
        cpuCount: request.cpuCount,
        memoryMB: request.memoryMB,
        diskSizeMB: request.diskSizeMB,
        envVars: request.envVars,
        accessToken: request.accessToken,
        envdControlSecret,
        // A build's resolvers are private addresses, closed to sandboxes unless allowed.
        egress:
          request.build === true
            ? {
                ...request.egress,
                allowOut: [...request.egress.allowOut, ...(await hostResolvers())],
              }
            : request.egress,
        state: 'creating',
        createdAt: new Date().toISOString(),
        boot: {
          defaultUser: template.defaultUser,
          defaultWorkdir: template.defaultWorkdir,
          startCmd: template.startCmd,
          readyCmd: template.readyCmd,
        },
      })
      const { slot } = record
      const log = config.logger.child({ sandboxID: request.sandboxID })
      try {
        // A snapshot's restore wires the netns it makes; the container's own is not used.
        const { address, initPid } = await startSandboxHost(
          this.parts,
          record,
          layers,
          request.volumeMounts,
          { wire: snapshot === undefined },
        )
        const waitingCpuWeight =
          request.warm === true
            ? await lowerCpuWeight(hostNames(config.prefix, request.sandboxID).cgroupPath)
            : undefined
        const init = {
          envVars: request.envVars,
          accessToken: request.accessToken,
          defaultUser: template.defaultUser,
          defaultWorkdir: template.defaultWorkdir,
        }
        const url = envdURL(address)
        if (snapshot !== undefined && template.snapshotID !== undefined) {
          await restoreSnapshot(this.parts, record, template.snapshotID, snapshot, layers)
          // The restored envd is its source's: it takes this sandbox's ID and secret now.
          await initLockedEnvd(
            url,
            { ...init, sandboxID: request.sandboxID, controlSecret: envdControlSecret },
            snapshot.envdControlSecret,
          )
        } else {
          await this.bootEnvd(record, { url, initPid }, init, template, log)
        }
        const target = { url, accessToken: request.accessToken }
        if (request.warm === true) await takeFirstCommandPath(target, template)
        const running: SandboxRecord = {
          ...record,
          address: address,
          state: 'running',
          waitingCpuWeight,
        }
        await this.parts.records.save(running)
        // The api logs the whole create at info; this is the host's share of it.
        const durationMs = elapsedMs(started)
        log.debug({ address: address, slot, durationMs }, 'sandbox host started')
        return info(running)
      } catch (error) {
        log.error({ err: error }, 'sandbox create failed; removing what was made')
        await removeSandboxHost(this.parts, request.sandboxID)
        throw error
      }
    })
  }

  async get(sandboxID: string): Promise<SandboxInfo | undefined> {
    const record = await this.parts.records.read(sandboxID)
    return record && record.state !== 'creating' ? info(record) : undefined
  }

  async list(): Promise<SandboxInfo[]> {
    const all = await this.parts.records.all()
    return all.flatMap(({ record }) =>
      record && record.state !== 'creating' ? [info(record)] : [],
    )
  }

  async changes(sandboxID: string): Promise<SandboxChange[]> {
    const record = await this.existing(sandboxID)
    return upperChanges(this.upperOf(sandboxID), this.layerDirs(record))
  }

  async changesArchive(sandboxID: string): Promise<AsyncIterable<Uint8Array>> {
    const record = await this.existing(sandboxID)
    return upperChangesArchive(this.upperOf(sandboxID), this.layerDirs(record), record.idMap)
  }

  async readOutput(sandboxID: string, from: number): Promise<SandboxOutput> {
    await this.existing(sandboxID)
    return readOutputLines(sandboxPaths(this.parts.records, sandboxID).output, from)
  }

  async usage(sandboxID: string): Promise<SandboxUsage | undefined> {
    const record = await this.parts.records.read(sandboxID)
    if (record?.state !== 'running') return undefined
    return readSandboxUsage(await readCgroupMounts(), {
      cgroupPath: hostNames(this.parts.config.prefix, sandboxID).cgroupPath,
      startedAt: new Date(record.createdAt),
      disk: sandboxPaths(this.parts.records, sandboxID).disk,
      cpuCount: record.cpuCount,
      memoryMB: record.memoryMB,
    })
  }

  pause(sandboxID: string, { keepMemory = true }: { keepMemory?: boolean } = {}): Promise<void> {
    if (keepMemory) {
      return this.transition(sandboxID, 'running', 'paused', 'pause', (runtime, id) =>
        runtime.pause(id),
      )
    }
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      if (record.state !== 'running' || record.boot === undefined) {
        throw new SandboxStateError(sandboxID, record.state, 'pause without memory')
      }
      await this.endProcesses({ ...record, state: 'paused' })
    })
  }

  /**
   * Ends the processes of a sandbox, wherever they are (running, frozen or on disk), and keeps
   * its files, synced: it is paused without memory from now on, its record first, so that an
   * agent that dies midway leaves a sandbox that reconcile stops.
   */
  private async endProcesses(record: SandboxRecord): Promise<void> {
    const { sandboxID } = record
    await this.parts.records.save({
      ...record,
      filesOnly: true,
      hibernated: undefined,
      checkpointBytes: undefined,
    })
    const runtime = this.parts.runtimes.get(record.runtime)
    // Thawed first: a frozen process takes its SIGKILL only once it runs.
    if (record.state === 'paused' && record.hibernated !== true) {
      await runtime.resume(this.containerID(sandboxID))
    }
    await runtime.remove(this.containerID(sandboxID))
    await rm(checkpointDir(this.parts, sandboxID), { recursive: true, force: true })
    await runHostCommand('sync', ['--file-system', this.upperOf(sandboxID)])
    await stopSandboxHost(this.parts, sandboxID)
  }

  hibernate(sandboxID: string): Promise<void> {
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      if (record.state !== 'paused') {
        throw new SandboxStateError(sandboxID, record.state, 'hibernate')
      }
      if (record.hibernated === true || record.filesOnly === true) return
      const started = performance.now()
      const { imageBytes } = await checkpointSandbox(this.parts, record)
      await this.parts.records.save({ ...record, hibernated: true, checkpointBytes: imageBytes })
      const durationMs = elapsedMs(started)
      this.parts.config.logger.info({ sandboxID, durationMs, imageBytes }, 'sandbox hibernated')
    })
  }

  resume(sandboxID: string, { reboot = false }: { reboot?: boolean } = {}): Promise<void> {
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      if (record.state !== 'paused') throw new SandboxStateError(sandboxID, record.state, 'resume')
      if (reboot && record.boot === undefined) {
        throw new SandboxStateError(sandboxID, record.state, 'reboot')
      }
      const started = performance.now()
      const log = this.parts.config.logger.child({ sandboxID })
      if (reboot && record.filesOnly !== true) await this.endProcesses(record)
      if (reboot || record.filesOnly === true) {
        await this.reboot(record, log)
        log.info({ durationMs: elapsedMs(started) }, 'sandbox booted over its files')
      } else if (record.hibernated === true) {
        await restoreSandbox(this.parts, record, this.layerDirs(record))
        log.info({ durationMs: elapsedMs(started) }, 'sandbox restored')
      } else {
        await this.parts.runtimes.get(record.runtime).resume(this.containerID(sandboxID))
      }
      // What endProcesses saved meanwhile is no longer: the sandbox runs.
      await this.parts.records.save({
        ...record,
        state: 'running',
        hibernated: undefined,
        checkpointBytes: undefined,
        filesOnly: undefined,
      })
    })
  }

  snapshot(sandboxID: string, snapshotID: string, layerID: string): Promise<SnapshotReport> {
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      if (record.state !== 'running') {
        throw new SandboxStateError(sandboxID, record.state, 'snapshot')
      }
      const { upper } = sandboxPaths(this.parts.records, sandboxID)
      const report = await snapshotSandbox(this.parts, record, snapshotID, {
        layerID,
        save: () => this.layers.add(layerID, (dir) => copyUpperAsLayer(upper, dir, record.idMap)),
      })
      const { frozenMs, imageBytes } = report
      this.parts.config.logger.info(
        { sandboxID, snapshotID, frozenMs, imageBytes },
        'sandbox snapshotted',
      )
      return report
    })
  }

  removeSnapshot(snapshotID: string): Promise<void> {
    return removeSnapshot(this.parts, snapshotID)
  }

  snapshots(): Promise<string[]> {
    return snapshotIDs(this.parts)
  }

  claim(sandboxID: string, claim: SandboxClaim): Promise<void> {
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      if (record.state !== 'running') {
        throw new SandboxStateError(sandboxID, record.state, 'claim')
      }
      // First, so that the client's own first command runs at the sandbox's full weight.
      if (record.waitingCpuWeight !== undefined) await restoreCpuWeight(record.waitingCpuWeight)
      const url = envdURL(record.address ?? '')
      const init = { envVars: claim.envVars, accessToken: claim.accessToken }
      await initEnvd(url, init, record.envdControlSecret ?? '')
      // Its control lock was verified when the pool started it, where a cold start verifies
      // it too (before the template's start command); no `/init` can lift it.
      await verifyEnvdInit(url, init)
      if (!sameEgress(record.egress, claim.egress)) {
        await this.parts.network.update(sandboxID, claim.egress)
      }
      await this.parts.records.save({
        ...record,
        ...claim,
        warm: undefined,
        waitingCpuWeight: undefined,
      })
    })
  }

  unreachableNetworks(): ReturnType<Agent['unreachableNetworks']> {
    return this.parts.network.unreachable()
  }

  updateNetwork(sandboxID: string, egress: SandboxRequest['egress']): Promise<void> {
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      // A sandbox paused without processes has no network: its resume wires one with the
      // record's rules.
      if (record.hibernated !== true && record.filesOnly !== true) {
        await this.parts.network.update(sandboxID, egress)
      }
      await this.parts.records.save({ ...record, egress })
    })
  }

  kill(sandboxID: string): Promise<void> {
    return this.exclusive(sandboxID, async () => {
      const started = performance.now()
      await this.existing(sandboxID)
      await removeSandboxHost(this.parts, sandboxID)
      const durationMs = elapsedMs(started)
      this.parts.config.logger.debug({ sandboxID, durationMs }, 'sandbox host removed')
    })
  }

  commit(sandboxID: string, layerID: string): Promise<void> {
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      // Its processes end first: a layer is what the sandbox wrote, not what it is writing.
      await this.parts.runtimes.get(record.runtime).remove(this.containerID(sandboxID))
      const { upper } = sandboxPaths(this.parts.records, sandboxID)
      await this.layers.add(layerID, (dir) => copyUpperAsLayer(upper, dir, record.idMap))
      await removeSandboxHost(this.parts, sandboxID)
    })
  }

  async close(): Promise<void> {
    await this.operations.settled()
  }

  /**
   * Waits for a new envd, pushes its `/init`, checks it took it, and runs the template's start
   * command: the boot of a new sandbox and of one paused without memory.
   */
  private async bootEnvd(
    record: SandboxRecord,
    { url, initPid }: { url: string; initPid: number },
    init: EnvdInit,
    template: BootSettings,
    log: Logger,
  ): Promise<void> {
    await waitForEnvd(url, {
      timeoutMs: this.parts.config.envdStartTimeoutMs ?? ENVD_START_TIMEOUT_MS,
      stillStarting: () => isProcessRunning(initPid),
    })
    await initLockedEnvd(url, init, record.envdControlSecret ?? '')
    if (template.startCmd !== undefined) {
      await startTemplateCommand({ url, accessToken: init.accessToken }, template, log)
    }
  }

  /** Boots a sandbox paused without memory over its files, as its create did. */
  private async reboot(record: SandboxRecord, log: Logger): Promise<void> {
    const { boot } = record
    if (boot === undefined) throw new Error(`sandbox '${record.sandboxID}' has no boot settings`)
    try {
      const { address, initPid } = await startSandboxHost(
        this.parts,
        record,
        this.layerDirs(record),
        [],
        { existingDisk: true },
      )
      const init = { envVars: record.envVars, accessToken: record.accessToken, ...boot }
      await this.bootEnvd(record, { url: envdURL(address), initPid }, init, boot, log)
    } catch (error) {
      // Paused without processes as before, to be booted again by the next resume.
      await stopSandboxHost(this.parts, record.sandboxID)
      throw error
    }
  }

  private transition(
    sandboxID: string,
    from: SandboxRecord['state'],
    to: SandboxRecord['state'],
    operation: string,
    act: (runtime: Runtime, containerID: string) => Promise<void>,
  ): Promise<void> {
    return this.exclusive(sandboxID, async () => {
      const record = await this.existing(sandboxID)
      if (record.state !== from) throw new SandboxStateError(sandboxID, record.state, operation)
      await act(this.parts.runtimes.get(record.runtime), this.containerID(sandboxID))
      await this.parts.records.save({ ...record, state: to })
    })
  }

  /**
   * Claims the lowest free network slot, and with it the sandbox's host ID range, by writing
   * the new sandbox's record, after every earlier claim has written its own.
   */
  private reserve(draft: Omit<SandboxRecord, 'slot' | 'idMap'>): Promise<SandboxRecord> {
    const { records } = this.parts
    const claim = this.reservations
      .catch(() => undefined)
      .then(async () => {
        if (await records.read(draft.sandboxID)) {
          throw new Error(`sandbox '${draft.sandboxID}' already exists`)
        }
        const taken = (await records.all()).flatMap(({ record }) => (record ? [record.slot] : []))
        const slot = freeSlot(taken)
        const address = createAddressPool(this.parts.config.addressPool).addresses(slot)
        const record: SandboxRecord = {
          ...draft,
          slot,
          idMap: sandboxIDMap(address.sandboxAddress),
        }
        await records.save(record)
        return record
      })
    this.reservations = claim
    return claim
  }

  private async existing(sandboxID: string): Promise<SandboxRecord> {
    const record = await this.parts.records.read(sandboxID)
    if (!record || record.state === 'creating') throw new SandboxNotFoundError(sandboxID)
    return record
  }

  /** The directories of the template layers the sandbox started from, lowest first. */
  private layerDirs(record: SandboxRecord): string[] {
    return (record.layers ?? []).map((layerID) => this.layers.path(layerID))
  }

  private upperOf(sandboxID: string): string {
    return sandboxPaths(this.parts.records, sandboxID).upper
  }

  private containerID(sandboxID: string): string {
    return `${this.parts.config.prefix}-${sandboxID}`
  }

  /** Runs `work` after any operation already running on the same sandbox. */
  private exclusive<T>(sandboxID: string, work: () => Promise<T>): Promise<T> {
    return this.operations.run(sandboxID, work)
  }
}

function sameEgress(a: EgressPolicy, b: EgressPolicy): boolean {
  return JSON.stringify([a.allowOut, a.denyOut]) === JSON.stringify([b.allowOut, b.denyOut])
}

function info(record: SandboxRecord): SandboxInfo {
  const address = record.address ?? ''
  return {
    sandboxID: record.sandboxID,
    templateID: record.templateID,
    layers: record.layers ?? [],
    waiting: record.warm === true,
    state: record.state === 'paused' ? 'paused' : 'running',
    hibernated: record.hibernated === true,
    filesOnly: record.filesOnly === true,
    checkpointBytes: record.checkpointBytes,
    runtime: record.runtime,
    cpuCount: record.cpuCount,
    memoryMB: record.memoryMB,
    address,
    envdURL: envdURL(address),
    createdAt: new Date(record.createdAt),
  }
}
