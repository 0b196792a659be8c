import { readFile } from 'node:fs/promises'

/** The PID a tool wrote to `file` (crun's `--pid-file`, CRIU's `--pidfile`). */
export async function readPidFile(file: string): Promise<number> {
  const pid = Number((await readFile(file, 'utf8')).trim())
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`no PID in ${file}`)
  return pid
}
