import { readFile } from 'node:fs/promises'
import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KSM_DIR, saveKsmSettings } from './ksm-settings.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// `sandbar serve --share-envd-memory` (issue 13, memory per idle sandbox): the kernel's KSM
// shares the pages envds have in common, and a sandbox's own programs stay out of it with
// their address layout randomised.

let serve: ServeInstance
let restoreKsm: (() => Promise<void>) | undefined
const opts = () => ({ ...serve.client })

/** envd's KSM state, read as root inside the sandbox: `ksm_merge_any` and merged pages. */
const ENVD_KSM = String.raw`for d in /proc/[0-9]*; do
  if tr '\0' ' ' < $d/cmdline | grep -q '^/.sandbar/lib/ld-linux.*/.sandbar/envd/envd.cjs'; then
    grep -E '^ksm_(merge_any|merging_pages)' $d/ksm_stat
  fi
done`

beforeAll(async () => {
  restoreKsm = await saveKsmSettings()
  serve = await startServe(['--share-envd-memory'])
})

afterAll(async () => {
  const leaks = await serve?.stop()
  await restoreKsm?.()
  expect(leaks).toEqual([])
})

describe('serve --share-envd-memory', () => {
  it("merges envd's pages across sandboxes, never a user program's", async () => {
    expect(await readFile(`${KSM_DIR}/run`, 'utf8')).toBe('1\n')
    const [first, second] = await Promise.all([Sandbox.create(opts()), Sandbox.create(opts())])
    const sandboxes = [first, second]
    try {
      for (const sandbox of sandboxes) {
        // A user's program: its layout randomised (personality without ADDR_NO_RANDOMIZE) and
        // its memory not offered to KSM, as root too.
        for (const user of ['user', 'root'] as const) {
          const own = await sandbox.commands.run(
            'cat /proc/self/personality; grep ksm_merge_any /proc/self/ksm_stat',
            { user },
          )
          expect(own.stdout).toBe('00000000\nksm_merge_any: no\n')
        }
        // A program may still fix its own layout, as `setarch -R` does (seccomp-profile.ts).
        const fixed = await sandbox.commands.run('setarch x86_64 -R cat /proc/self/personality')
        expect(fixed.stdout).toBe('00040000\n')
      }
      // envd's pages: offered to KSM, and merged with the other envd's within the scan.
      await expect
        .poll(
          async () => {
            const { stdout } = await first.commands.run(ENVD_KSM, { user: 'root' })
            const merged = Number(/ksm_merging_pages (\d+)/.exec(stdout)?.[1] ?? 0)
            return { mergeAny: /ksm_merge_any: (\w+)/.exec(stdout)?.[1], merged: merged > 256 }
          },
          { timeout: 60_000, interval: 1000 },
        )
        .toEqual({ mergeAny: 'yes', merged: true })
    } finally {
      await Promise.all(sandboxes.map((sandbox) => sandbox.kill()))
    }
  }, 90_000)
})
