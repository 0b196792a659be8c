import { join } from 'node:path'
import type { Logger } from '../../logger.js'
import { readCgroupMode } from './cgroup-mode.js'
import { OciCliRuntime } from './oci-cli-runtime.js'
import { fullOciSpecOptions } from './oci-spec.js'
import type { Runtime } from './runtime.js'
import { WITHOUT_UNIFIED_CGROUP_HELPER, withoutUnifiedCgroup } from './runtime-args.js'

export interface CliRuntimeOptions {
  binary: string
  stateRoot: string
  logger: Logger
  /** The agent's build directory, where its helper programs are. */
  helperDir: string
}

/** crun, the default runtime (DESIGN.md): the fastest to start and exec (host-facts). */
export function createCrunRuntime(options: CliRuntimeOptions): Runtime {
  return new OciCliRuntime({
    name: 'crun',
    ...options,
    globalFlags: [],
    specOptions: fullOciSpecOptions,
    gaps: {},
    pausesWithCgroupFreezer: true,
    statusFile: (id) => join(options.stateRoot, id, 'status'),
    compiledSeccompFile: (id) => join(options.stateRoot, id, 'seccomp.bpf'),
    async launchRun(args) {
      // crun 1.8 refuses hybrid cgroups; without the cgroup2 mount it uses v1 (host-facts).
      // Only `run` creates cgroups, so the other commands run crun directly.
      const mode = await readCgroupMode()
      return mode.kind === 'hybrid'
        ? withoutUnifiedCgroup(
            join(options.helperDir, WITHOUT_UNIFIED_CGROUP_HELPER),
            mode.unifiedMountPoint,
            options.binary,
            args,
          )
        : { file: options.binary, args }
    },
  })
}
