import { runHostCommand } from '../../src/agent/host-command.js'
import { sampleMs } from '../stats.js'

/**
 * `podman run --rm` of `rootfs` running `true`: what users would otherwise reach for, beside
 * a Sandbar sandbox's whole life. Debian's podman with its crun refuses a hybrid-cgroup host
 * and its default limits exceed a VM's hard ones (host-facts § Podman), hence runc and the
 * ulimits; no network, as the bare containers have none; `:O` puts an overlay over the
 * rootfs, so a shared template layer stays untouched. `undefined` when podman is not installed.
 */
export async function podmanRunSamples(
  rootfs: string,
  count: number,
): Promise<number[] | undefined> {
  const installed = await runHostCommand('podman', ['--version']).then(
    () => true,
    () => false,
  )
  if (!installed) return undefined
  return sampleMs(count, 1, () =>
    runHostCommand('podman', [
      ...['run', '--rm', '--runtime', 'runc', '--network', 'none'],
      ...['--ulimit', 'nofile=10000:10000', '--ulimit', 'nproc=4096:4096'],
      ...['--rootfs', `${rootfs}:O`, '/bin/true'],
    ]),
  )
}
