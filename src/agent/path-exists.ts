import { readFileSync } from 'node:fs'
import { access, readFile } from 'node:fs/promises'
import { errnoCode } from '../errno-code.js'

/** Whether anything exists at `path` (the agent runs as root, so access means existence). */
export function pathExists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

/** The text of the file at `path`, or undefined when there is none. */
export async function readFileIfExists(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw error
  })
}

/**
 * readFileIfExists, synchronously: for kernel files (cgroup, proc), which answer at once, where
 * an asynchronous read is a thread-pool round trip.
 */
export function readFileIfExistsSync(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw error
  }
}
