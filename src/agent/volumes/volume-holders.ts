import { readdir, readFile, readlink } from 'node:fs/promises'
import { loopDevicesOf } from '../rootfs/disk-image.js'
import { parseMountinfo } from '../rootfs/mountinfo.js'

/** The `major:minor` of each loop device backed by `image` (sysfs). */
export async function loopDeviceNumbers(image: string): Promise<string[]> {
  const numbers: string[] = []
  for (const device of loopDevicesOf(image)) {
    const name = device.slice('/dev/'.length)
    const text = await readFile(`/sys/block/${name}/dev`, 'utf8').catch(() => '')
    if (text.trim() !== '') numbers.push(text.trim())
  }
  return numbers
}

/**
 * Whether a mount namespace other than the agent's own mounts a filesystem on one of
 * `devices`: a sandbox whose volume mount (a bind of the volume's directory) holds the
 * volume, running or paused, since a frozen process keeps its namespace. Each namespace is
 * read once, through the first process found in it.
 */
export async function mountedElsewhere(devices: readonly string[]): Promise<boolean> {
  if (devices.length === 0) return false
  const seen = new Set([await readlink('/proc/self/ns/mnt')])
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    // A process that exits meanwhile has no namespace to read: it holds nothing.
    const namespace = await readlink(`/proc/${pid}/ns/mnt`).catch(() => undefined)
    if (namespace === undefined || seen.has(namespace)) continue
    seen.add(namespace)
    const text = await readFile(`/proc/${pid}/mountinfo`, 'utf8').catch(() => '')
    if (parseMountinfo(text).some((entry) => devices.includes(entry.device))) return true
  }
  return false
}
