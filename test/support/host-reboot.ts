import { readFile, rmdir } from 'node:fs/promises'
import { hostNames } from '../../src/agent/host-names.js'
import { unmountAll } from '../../src/agent/rootfs/unmount.js'
import { leftoverCgroupDirs } from '../agent/cgroup-probe.js'

/**
 * What a host reboot takes from a service whose sandboxes are stopped (hibernated): every
 * mount under its data directory (roots, disks, pinned namespaces; loop devices go with their
 * mounts) and the sandboxes' cgroups. Its files stay, as on a disk.
 */
export async function simulateReboot(
  dataDir: string,
  prefix: string,
  sandboxIDs: readonly string[],
): Promise<void> {
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((mountPoint) => mountPoint.startsWith(dataDir))
    .sort((a, b) => b.length - a.length)
  for (const mountPoint of mounts) await unmountAll(mountPoint)
  for (const sandboxID of sandboxIDs) {
    for (const dir of await leftoverCgroupDirs(hostNames(prefix, sandboxID).cgroupPath)) {
      await rmdir(dir)
    }
  }
}
