import type { CliRuntimeOptions } from './crun-runtime.js'
import { OciCliRuntime } from './oci-cli-runtime.js'
import type { Runtime } from './runtime.js'

/**
 * runsc (gVisor), the opt-in hardened runtime. host-facts § OCI runtimes: its own network
 * stack fails on our kernel, so it uses the pre-made netns's stack (`--network=host` inside
 * the joined netns); an OCI user namespace and a pids limit both break it, so the spec has
 * neither (gVisor's own kernel stands between the sandbox and the host instead).
 */
export function createRunscRuntime(options: CliRuntimeOptions): Runtime {
  return new OciCliRuntime({
    name: 'runsc',
    ...options,
    globalFlags: ['--network=host'],
    specOptions: { userNamespace: false, pidsLimit: false },
    launchRun: async (args) => ({ file: options.binary, args }),
  })
}
