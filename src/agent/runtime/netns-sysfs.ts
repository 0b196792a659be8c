import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { mountSysfsOfNetns } from '../rootfs/mount-calls.js'
import { unmountAll } from '../rootfs/unmount.js'

/** Where a container's own sysfs is mounted on the host while the runtime starts it. */
export function netnsSysfsDir(bundleDir: string): string {
  return path.join(bundleDir, 'sys')
}

/**
 * Mounts a sysfs instance for the network namespace at `netnsPath` on `dir`, from the host's
 * user namespace. sysfs shows the network devices of the netns of the task that mounts it, and
 * a sandbox's user namespace may not mount one itself for a netns the host's user namespace
 * owns. The mount lands in the agent's own mount namespace, where the runtime can bind it.
 */
export async function mountNetnsSysfs(netnsPath: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true })
  await mountSysfsOfNetns(netnsPath, dir)
}

/**
 * Unmounts the host's copy once the container has its own bind of it (the container's mount
 * namespace keeps that), so no sysfs mount of a sandbox stays on the host. Not mounted is fine.
 */
export async function unmountNetnsSysfs(dir: string): Promise<void> {
  await unmountAll(dir)
}
