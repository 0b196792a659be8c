import { readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as z from 'zod/mini'
import type { Logger } from '../../logger.js'
import { runHostCommand } from '../host-command.js'
import { readPidFile } from '../pid-file.js'
import { type CgroupFreezer, cgroupFreezer, freezerCgroupDir } from './cgroup-freezer.js'
import { removeContainerCgroups } from './container-cgroups.js'
import { mountNetnsSysfs, netnsSysfsDir, unmountNetnsSysfs } from './netns-sysfs.js'
import { buildOciSpec, needsNetnsSysfs, type OciSpecOptions } from './oci-spec.js'
import type {
  ContainerCheckpoints,
  ContainerSpec,
  ContainerState,
  Runtime,
  RuntimeGaps,
  RuntimeName,
} from './runtime.js'
import { type Command, type RuntimeOperation, runtimeArgs } from './runtime-args.js'
import {
  type ContainerRecord,
  isUnknownContainer,
  parseListOutput,
  parseStateOutput,
} from './runtime-state.js'

/** What sets crun, runc and runsc apart; everything else is the same CLI. */
export interface OciCliFlavor {
  name: RuntimeName
  binary: string
  stateRoot: string
  /** Flags before the command, after `--root`. */
  globalFlags: string[]
  specOptions: OciSpecOptions
  /** What it lacks next to crun and runc; none for those two. */
  gaps: RuntimeGaps
  /** How to launch `run` (crun on a hybrid host needs a private mount namespace). */
  launchRun(args: string[]): Promise<Command>
  /**
   * Whether pause and resume are the container cgroup's freezer, which `state` reads back
   * (crun, runc), so they can be written directly; runsc pauses inside its own kernel.
   */
  pausesWithCgroupFreezer: boolean
  /**
   * The file where the runtime keeps a container's init PID and that process's start time
   * (crun: `<root>/<id>/status`, JSON); a container CRIU restored is written into it. Unset
   * where the format is not known: such a runtime's sandboxes are not checkpointed.
   */
  statusFile?: (id: string) => string
  /**
   * Where the runtime keeps the filter it compiled from a container's seccomp profile (crun:
   * `<root>/<id>/seccomp.bpf`), set where it also takes such a filter back, compiled, through
   * the `run.oci.seccomp_bpf_data` annotation.
   */
  compiledSeccompFile?: (id: string) => string
  logger: Logger
}

/** crun's annotation for a seccomp filter given compiled (base64 BPF): no compile at `run`. */
export const SECCOMP_BPF_ANNOTATION = 'run.oci.seccomp_bpf_data'

const bundleConfigSchema = z.object({ linux: z.object({ cgroupsPath: z.string() }) })

/** Where `run` has the runtime write the container's init PID, in its bundle. */
const INIT_PID_FILE = 'init.pid'

/** A container to remove: its cgroups (undefined where its bundle is unreadable), paused or not. */
interface RemovalTarget {
  cgroupsPath: string | undefined
  paused: boolean
}

/** A Runtime that drives an OCI runtime CLI; the flavor supplies the differences. */
export class OciCliRuntime implements Runtime {
  readonly name: RuntimeName
  readonly gaps: RuntimeGaps
  readonly checkpoints?: ContainerCheckpoints
  readonly #flavor: OciCliFlavor
  readonly #logger: Logger
  /** Containers' `cgroupsPath`s, known from `run` or read back from their bundles once. */
  readonly #cgroupsPaths = new Map<string, string>()
  /** Containers' freezers, found at their first pause. */
  readonly #freezers = new Map<string, CgroupFreezer>()
  /**
   * The filters the runtime compiled, base64, by the profile's JSON: libseccomp takes ~15 ms
   * of every `run` to compile the same profile, so each is compiled once per agent.
   */
  readonly #compiledSeccomp = new Map<string, string>()

  constructor(flavor: OciCliFlavor) {
    this.name = flavor.name
    this.gaps = flavor.gaps
    this.#flavor = flavor
    this.#logger = flavor.logger.child({ runtime: flavor.name })
    const { statusFile } = flavor
    if (statusFile !== undefined) {
      this.checkpoints = {
        target: async (id) => {
          const record = await this.#record(id)
          if (record === undefined || record.pid <= 0)
            throw new Error(`container ${id} is not running`)
          return {
            pid: record.pid,
            freezerCgroup: await freezerCgroupDir(await this.#cgroupsPath(id)),
          }
        },
        restored: (id, pid) => writeRestoredInit(statusFile(id), pid),
      }
    }
  }

  async run(spec: ContainerSpec): Promise<number> {
    const config = buildOciSpec(spec, this.#flavor.specOptions)
    const profile = JSON.stringify(config.linux.seccomp)
    const compiled = this.#compiledSeccomp.get(profile)
    // The profile stays in the config, for its flags and for the reader; crun loads the filter.
    if (compiled !== undefined) config.annotations = { [SECCOMP_BPF_ANNOTATION]: compiled }
    await writeFile(join(spec.bundleDir, 'config.json'), JSON.stringify(config))
    this.#cgroupsPaths.set(spec.id, spec.cgroupsPath)
    const pidFile = join(spec.bundleDir, INIT_PID_FILE)
    const args = this.#args({ op: 'run', id: spec.id, bundleDir: spec.bundleDir, pidFile })
    const command = await this.#flavor.launchRun(args)
    const sysfs = needsNetnsSysfs(this.#flavor.specOptions)
      ? netnsSysfsDir(spec.bundleDir)
      : undefined
    if (sysfs !== undefined) await mountNetnsSysfs(spec.netnsPath, sysfs)
    try {
      // The init inherits the runtime's stdio: stdout/stderr a file, so nothing waits on a
      // pipe, and stdin the handover when there is one.
      await runHostCommand(command.file, command.args, {
        outputFile: spec.outputFile,
        ...(spec.initStdin === undefined ? {} : { stdinFD: spec.initStdin }),
      })
    } finally {
      if (sysfs !== undefined) await unmountNetnsSysfs(sysfs)
    }
    if (compiled === undefined) await this.#keepCompiledSeccomp(spec.id, profile)
    this.#logger.debug({ containerID: spec.id }, 'container running')
    return readPidFile(pidFile)
  }

  /**
   * Keeps the filter the runtime compiled for a container it just started. The runtime wrote
   * it before the container's process ran (crun writes it for `exec`), in its own state
   * directory, which no sandbox reaches. Not there or not whole: the next `run` compiles again.
   */
  async #keepCompiledSeccomp(id: string, profile: string): Promise<void> {
    const file = this.#flavor.compiledSeccompFile?.(id)
    if (file === undefined) return
    const filter = await readFile(file).catch(() => undefined)
    // A classic BPF program is whole instructions of 8 bytes.
    if (filter === undefined || filter.length === 0 || filter.length % 8 !== 0) {
      this.#logger.debug({ containerID: id, file }, 'no compiled seccomp filter to keep')
      return
    }
    this.#compiledSeccomp.set(profile, filter.toString('base64'))
  }

  async state(id: string): Promise<ContainerState | undefined> {
    const record = await this.#record(id)
    return record === undefined ? undefined : toState(record)
  }

  async list(): Promise<ContainerState[]> {
    return parseListOutput(await this.#call({ op: 'list' })).map(toState)
  }

  async pause(id: string): Promise<void> {
    if (!this.#flavor.pausesWithCgroupFreezer) {
      await this.#call({ op: 'pause', id })
      return
    }
    await (await this.#freezer(id)).setFrozen(true)
  }

  async resume(id: string): Promise<void> {
    if (!this.#flavor.pausesWithCgroupFreezer) {
      await this.#call({ op: 'resume', id })
      return
    }
    await (await this.#freezer(id)).setFrozen(false)
  }

  async remove(id: string): Promise<void> {
    const target = (await this.#known(id)) ?? (await this.#recorded(id))
    if (target === undefined) return
    const { cgroupsPath } = target
    // A frozen process cannot die, and runsc refuses to signal a paused container ("cannot
    // signal container … in state paused"): it thaws first. `delete --force` kills what still
    // runs and waits for it to go, in one runtime call where a kill and polls of the state took
    // three or more.
    if (target.paused) await this.resume(id)
    await this.#call({ op: 'delete', id }).catch((error: unknown) => {
      if (!isUnknownContainer(error)) throw error
    })
    this.#cgroupsPaths.delete(id)
    this.#freezers.delete(id)
    if (cgroupsPath === undefined) {
      this.#logger.warn({ containerID: id }, 'bundle config unreadable; cgroups not checked')
    } else {
      await removeContainerCgroups(cgroupsPath)
    }
    this.#logger.debug({ containerID: id }, 'container removed')
  }

  /**
   * What `remove` needs of a container whose cgroups this process knows (it started it, or
   * paused it), where pauses are the cgroup freezer's: the freezer tells whether it is paused,
   * so no `state` call (a runtime started, ~4 ms of CPU) precedes every delete. Undefined when
   * that does not hold, or the cgroup is gone: the runtime's state tells then.
   */
  async #known(id: string): Promise<RemovalTarget | undefined> {
    const cgroupsPath = this.#cgroupsPaths.get(id)
    if (cgroupsPath === undefined || !this.#flavor.pausesWithCgroupFreezer) return undefined
    try {
      return { cgroupsPath, paused: (await this.#freezer(id)).isFrozen() }
    } catch {
      return undefined
    }
  }

  async #recorded(id: string): Promise<RemovalTarget | undefined> {
    const record = await this.#record(id)
    if (record === undefined) return undefined
    return { cgroupsPath: await readCgroupsPath(record.bundle), paused: record.status === 'paused' }
  }

  async #freezer(id: string): Promise<CgroupFreezer> {
    const known = this.#freezers.get(id)
    if (known !== undefined) return known
    const freezer = await cgroupFreezer(await this.#cgroupsPath(id))
    this.#freezers.set(id, freezer)
    return freezer
  }

  async #cgroupsPath(id: string): Promise<string> {
    const known = this.#cgroupsPaths.get(id)
    if (known !== undefined) return known
    const record = await this.#record(id)
    const cgroupsPath = record && (await readCgroupsPath(record.bundle))
    if (cgroupsPath === undefined) throw new Error(`container ${id} has no readable cgroupsPath`)
    this.#cgroupsPaths.set(id, cgroupsPath)
    return cgroupsPath
  }

  async #record(id: string): Promise<ContainerRecord | undefined> {
    try {
      return parseStateOutput(await this.#call({ op: 'state', id }))
    } catch (error) {
      if (isUnknownContainer(error)) return undefined
      throw error
    }
  }

  #args(operation: RuntimeOperation): string[] {
    return runtimeArgs(this.#flavor.stateRoot, this.#flavor.globalFlags, operation)
  }

  #call(operation: RuntimeOperation): Promise<string> {
    return runHostCommand(this.#flavor.binary, this.#args(operation))
  }
}

const statusSchema = z.looseObject({ pid: z.number(), 'process-start-time': z.number() })

/**
 * Writes `pid` and its start time (clock ticks since boot, /proc/<pid>/stat's 22nd field) into
 * the runtime's status file, as the runtime's own restore does: its `state`, `kill` and
 * `delete` then find the restored init, and tell it from a later process with the same PID.
 */
async function writeRestoredInit(file: string, pid: number): Promise<void> {
  const status = statusSchema.parse(JSON.parse(await readFile(file, 'utf8')))
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const startTime = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
  if (!Number.isSafeInteger(startTime)) throw new Error(`no start time in /proc/${pid}/stat`)
  const temp = `${file}.restored`
  await writeFile(temp, JSON.stringify({ ...status, pid, 'process-start-time': startTime }))
  await rename(temp, file)
}

function toState(record: ContainerRecord): ContainerState {
  return { id: record.id, status: record.status, pid: record.pid }
}

async function readCgroupsPath(bundle: string): Promise<string | undefined> {
  try {
    const text = await readFile(join(bundle, 'config.json'), 'utf8')
    return bundleConfigSchema.parse(JSON.parse(text)).linux.cgroupsPath
  } catch {
    return undefined
  }
}
