import { writeSync } from 'node:fs'
import type { DestinationStream } from 'pino'

/**
 * Where a sandbox's envd logs: its stderr, the sandbox's output file, on the sandbox's own disk
 * (sandbox-host.ts). Sandbox code can fill that disk, and then a write fails. The line is lost,
 * and envd keeps serving, so the sandbox can still run the command that frees the space. pino's
 * own destination re-raised the failure, and on the way out retried it forever, hanging envd.
 * A write to a file waits on no reader, so each line is written before the call returns.
 */
export function outputFileLog(fd: number): DestinationStream {
  return {
    write(line: string) {
      try {
        writeSync(fd, line)
      } catch {
        // The line is lost. A full disk (ENOSPC, EDQUOT) is the sandbox's to free.
      }
    },
  }
}
