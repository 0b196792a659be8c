/** One invocation of an OCI runtime CLI (the crun/runc/runsc commands Sandbar uses). */
export type RuntimeOperation =
  | { op: 'run'; id: string; bundleDir: string; pidFile: string }
  | { op: 'state'; id: string }
  | { op: 'list' }
  | { op: 'pause'; id: string }
  | { op: 'resume'; id: string }
  | { op: 'delete'; id: string }

/**
 * argv for one runtime call. `globalFlags` come first (the runtime's own, e.g. runsc's
 * network mode); `--root` gives every agent its own state directory, so one agent's `list`
 * never shows another's containers. Pure.
 */
export function runtimeArgs(
  stateRoot: string,
  globalFlags: readonly string[],
  operation: RuntimeOperation,
): string[] {
  return ['--root', stateRoot, ...globalFlags, ...operationArgs(operation)]
}

function operationArgs(operation: RuntimeOperation): string[] {
  switch (operation.op) {
    case 'run':
      // --detach: return once the init runs instead of waiting for it to exit; --pid-file:
      // where the init's PID is then, for the caller to watch without another runtime call.
      return [
        ...['run', '--detach', '--pid-file', operation.pidFile],
        ...['--bundle', operation.bundleDir, operation.id],
      ]
    case 'state':
      return ['state', operation.id]
    case 'list':
      // JSON for a zod parse; the default is a table meant for people.
      return ['list', '--format', 'json']
    case 'pause':
      return ['pause', operation.id]
    case 'resume':
      return ['resume', operation.id]
    case 'delete':
      // --force: kills what still runs (SIGKILL) and deletes the container once it is gone.
      return ['delete', '--force', operation.id]
  }
}

/** A program and its argv. */
export interface Command {
  file: string
  args: string[]
}

/** The helper that runs a runtime without the cgroup2 mount, in the agent's build directory. */
export const WITHOUT_UNIFIED_CGROUP_HELPER = 'without-unified-cgroup'

/**
 * Runs `binary args…` in a private mount namespace without the cgroup2 mount of a hybrid
 * host, so crun 1.8 sees pure cgroup v1 and stops refusing the host (host-facts § OCI
 * runtimes), through `helper` (without-unified-cgroup.c). Pure.
 */
export function withoutUnifiedCgroup(
  helper: string,
  unifiedMountPoint: string,
  binary: string,
  args: readonly string[],
): Command {
  return { file: helper, args: [unifiedMountPoint, binary, ...args] }
}
