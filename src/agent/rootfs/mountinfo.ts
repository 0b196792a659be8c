import { readFile } from 'node:fs/promises'
import path from 'node:path'

/** One line of `/proc/self/mountinfo` (proc(5)), with octal escapes (`\040`) decoded. */
export interface MountEntry {
  /** The filesystem's device, `major:minor` (field 3). */
  device: string
  mountPoint: string
  /** The per-mount options (field 6): `rw,nosuid,nodev,noatime`, say. */
  mountOptions: string
  fsType: string
  source: string
  superOptions: string
}

/** Parses mountinfo: fields 3 (device), 5 (mount point), 6 (mount options), then after the `-` separator type, source, options. */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = []
  for (const line of text.split('\n')) {
    const fields = line.split(' ')
    const separator = fields.indexOf('-')
    const mountPoint = fields[4]
    const [fsType, source, superOptions] = fields.slice(separator + 1)
    if (separator < 6 || mountPoint === undefined || fsType === undefined) continue
    entries.push({
      device: fields[2] ?? '',
      mountPoint: unescapeOctal(mountPoint),
      mountOptions: fields[5] ?? '',
      fsType,
      source: unescapeOctal(source ?? ''),
      superOptions: unescapeOctal(superOptions ?? ''),
    })
  }
  return entries
}

/** The mounts of the agent's mount namespace. */
export async function readMounts(): Promise<MountEntry[]> {
  return parseMountinfo(await readFile('/proc/self/mountinfo', 'utf8'))
}

/** Mount points at `dir` or below it (a half-built layer with mmdebstrap's /proc, say). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const resolved = path.resolve(dir)
  return (await readMounts())
    .map((entry) => entry.mountPoint)
    .filter((point) => point === resolved || point.startsWith(`${resolved}/`))
}

function unescapeOctal(text: string): string {
  // Most fields have no escape, and the table holds thousands of them on a busy host.
  if (!text.includes('\\')) return text
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  )
}
