import type { CliRuntimeOptions } from './crun-runtime.js'
import { OciCliRuntime } from './oci-cli-runtime.js'
import type { Runtime } from './runtime.js'

/**
 * runsc (gVisor), the opt-in hardened runtime: bookworm-backports' build (scripts/setup.sh),
 * measured on the hybrid-cgroup host (host-facts § OCI runtimes).
 *
 * - `--network=host`: gVisor's own network stack fails on our kernel, so the sentry uses the
 *   stack of the netns the network role made and the spec joins.
 * - `--overlay2=none`: by default gVisor lays its own overlay over the root and keeps the
 *   writes in a file store of its own; the root is already the sandbox's overlay, whose upper
 *   directory must get the writes, as it does under crun.
 * - `--oci-seccomp`: without it runsc drops the spec's seccomp filter (the init inside showed
 *   `Seccomp: 0`; with it, 2), so the allow-list holds inside as it does under crun, with the
 *   difference `seccompErrno` names.
 * - The OCI user namespace: sentry and gofer then run as the sandbox's root host ID (its own
 *   range, user-namespace.ts), not host root. The layers below its overlay are idmapped
 *   through the agent's namespace of the same map, so they read the same under runsc's own.
 * - No pids limit: the sentry's and gofer's threads count against it (see `gaps`).
 * - The cgroups are v1 on a hybrid host, as runc's are, so `run` needs no private mount
 *   namespace; `delete` removes them from every hierarchy.
 * - A killed container reads `running` until the host's PID 1 reaps the exited sentry (runsc
 *   counts a zombie as alive): about 1.6 s on our VMs, whose PID 1 reaps lazily.
 */
export function createRunscRuntime(options: CliRuntimeOptions): Runtime {
  return new OciCliRuntime({
    name: 'runsc',
    ...options,
    globalFlags: ['--network=host', '--overlay2=none', '--oci-seccomp'],
    specOptions: { userNamespace: true, pidsLimit: false, ownKernel: true },
    gaps: {
      hostProcesses:
        "the host sees the sentry (as the root host ID of the sandbox range, CapBnd 00000000a80c25ff, runsc's own seccomp filter); inside, the init's CapBnd is 00000000a80405fb, Docker's set less CAP_NET_RAW",
      pidsLimit:
        'sentry and gofer hold 21-23 host threads at idle; with pids.max 40, 30 sleeps inside hit it (pids.events max 1-2) and the container stopped',
      seccompErrno:
        'every refused syscall answers EPERM (kcmp, clone3 probed), so clone3 is allowed: glibc falls back from it to clone only on ENOSYS',
      ownBootId:
        "gVisor's kernel makes each sandbox a boot ID of its own at each start (1aba1def-… where the host's is 84dc2d52-…) and refuses writes to it (EIO); the one given is not bound",
      oomKillInside:
        'gVisor has no OOM killer (google/gvisor#1967): 200 MiB in a 96 MiB sandbox, the host OOM-killed the sentry (oom_kill 1) and the container stopped',
    },
    launchRun: async (args) => ({ file: options.binary, args }),
    pausesWithCgroupFreezer: false,
  })
}
