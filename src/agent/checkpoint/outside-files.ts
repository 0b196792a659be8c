import { readdir, readFile, readlink, stat } from 'node:fs/promises'
import path from 'node:path'
import { externalFileKey } from './criu-args.js'

/** What a descriptor's file outside the sandbox's root is, and so what stands in for it. */
export type OutsideFileRole =
  /** The sandbox's output log (its init's and envd's stdout and stderr): reopened for append. */
  | 'output'
  /** envd's handover, read and emptied at start (sandbox-host.ts): /dev/null stands in. */
  | 'handover'

export interface OutsideFile {
  key: string
  role: OutsideFileRole
}

/**
 * The files outside the sandbox's root that its processes hold open: only the agent hands any
 * such descriptor in (the output log and the handover to its init), and the processes pass
 * them on. CRIU cannot reach them through the sandbox's mounts, so each is dumped as external
 * and given back as an inherited descriptor at restore.
 */
export async function outsideFiles(
  freezerCgroup: string,
  files: { output: string; handover: string },
): Promise<OutsideFile[]> {
  const pids = (await readFile(path.join(freezerCgroup, 'cgroup.procs'), 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
  const found = new Map<string, OutsideFile>()
  for (const pid of pids) {
    const fdDir = `/proc/${pid}/fd`
    for (const fd of await readdir(fdDir).catch(() => [])) {
      const target = await readlink(path.join(fdDir, fd)).catch(() => '')
      const role = roleOf(target, files)
      if (role === undefined) continue
      const key = await descriptorKey(Number(pid), Number(fd))
      found.set(key, { key, role })
    }
  }
  return [...found.values()]
}

function roleOf(
  target: string,
  files: { output: string; handover: string },
): OutsideFileRole | undefined {
  if (target === files.output) return 'output'
  // The handover is unlinked before it is written: `<path> (deleted)`.
  if (target.startsWith(`${files.handover} `)) return 'handover'
  return undefined
}

/** CRIU's key of descriptor `fd` of `pid`: the mount it was opened through and its inode. */
async function descriptorKey(pid: number, fd: number): Promise<string> {
  const fdinfo = await readFile(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
  const mountID = Number(/^mnt_id:\s*(\d+)$/m.exec(fdinfo)?.[1])
  if (!Number.isSafeInteger(mountID)) throw new Error(`no mnt_id in /proc/${pid}/fdinfo/${fd}`)
  const { ino } = await stat(`/proc/${pid}/fd/${fd}`)
  return externalFileKey(mountID, ino)
}
