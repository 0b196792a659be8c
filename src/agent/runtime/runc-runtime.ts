import type { CliRuntimeOptions } from './crun-runtime.js'
import { OciCliRuntime } from './oci-cli-runtime.js'
import { fullOciSpecOptions } from './oci-spec.js'
import type { Runtime } from './runtime.js'

/** runc, the fallback runtime (DESIGN.md); works on hybrid cgroup hosts as is (host-facts). */
export function createRuncRuntime(options: CliRuntimeOptions): Runtime {
  return new OciCliRuntime({
    name: 'runc',
    ...options,
    globalFlags: [],
    specOptions: fullOciSpecOptions,
    gaps: {
      ownBootId:
        'runc 1.1 refuses any mount inside /proc ("cannot be mounted because it is inside /proc"), so its sandboxes read the host\'s boot ID',
    },
    launchRun: async (args) => ({ file: options.binary, args }),
    pausesWithCgroupFreezer: true,
  })
}
