import { errnoCode } from './errno-code.js'
/** Whether a process with this PID exists (a crashed writer's temp files may go; a live one's not). */
export function isProcessRunning(pid: number): boolean {
  try {
    // Signal 0 checks that the process exists without sending anything.
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errnoCode(error) === 'EPERM'
  }
}

/** The PID a temp name `<prefix><pid>-<random>` carries, or undefined. */
export function pidInName(name: string, prefix: string): number | undefined {
  if (!name.startsWith(prefix)) return undefined
  const pid = Number.parseInt(name.slice(prefix.length), 10)
  return Number.isInteger(pid) ? pid : undefined
}
