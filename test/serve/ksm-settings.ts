import { readFile, writeFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

/** The kernel's same-page merging, which `serve --share-envd-memory` turns on. */
export const KSM_DIR = '/sys/kernel/mm/ksm'

/** What serve changes (src/agent/memory-merging.ts). */
const KSM_FILES = ['pages_to_scan', 'sleep_millisecs', 'run']

/** Reads KSM's settings and returns what puts them back as they were. */
export async function saveKsmSettings(): Promise<() => Promise<void>> {
  const before = new Map<string, string>()
  for (const file of KSM_FILES) {
    before.set(file, (await readFile(`${KSM_DIR}/${file}`, 'utf8')).trim())
  }
  return async () => {
    for (const [file, value] of before) await writeFile(`${KSM_DIR}/${file}`, value)
  }
}

/** The pages KSM has merged into others, host-wide. */
async function ksmPagesSharing(): Promise<number> {
  return Number(await readFile(`${KSM_DIR}/pages_sharing`, 'utf8'))
}

/**
 * Resolves once KSM has merged what it will: its merged pages grew by less than 1% over
 * `windowMs`, or `timeoutMs` passed.
 */
export async function ksmSettled(windowMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let before = await ksmPagesSharing()
  while (Date.now() < deadline) {
    await sleep(windowMs)
    const now = await ksmPagesSharing()
    if (now > 0 && now - before < now / 100) return
    before = now
  }
}
