import { randomBytes } from 'node:crypto'
import { Sandbox } from 'e2b'
import { test as base, inject } from 'vitest'

/**
 * Every test drives the SDK in debug mode: sandbox calls go to the envd on localhost:49983,
 * or to the one `global-setup.ts` started elsewhere (the SDK honours `E2B_SANDBOX_URL` first).
 */
process.env.E2B_DEBUG = 'true'
if (new URL(inject('envdUrl')).port !== '49983') process.env.E2B_SANDBOX_URL = inject('envdUrl')

export { TEST_USER } from './envd-namespace.js'

/** A name no other test uses, for files, tags and directories (`sbt-<random>`). */
export function uniqueName(prefix = 'sbt'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`
}

interface SandboxFixtures {
  sandbox: Sandbox
  /** A fresh directory in the user's home, removed after the test. */
  testDir: string
}

/**
 * `sandboxTest` gives each test an SDK sandbox and a private directory; afterwards it removes
 * the directory and kills every process the test left running, even when the test failed.
 */
export const sandboxTest = base.extend<SandboxFixtures>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their dependencies by destructuring.
  sandbox: async ({}, use) => {
    const sandbox = await Sandbox.create()
    const before = new Set((await sandbox.commands.list()).map((p) => p.pid))
    try {
      await use(sandbox)
    } finally {
      for (const process of await sandbox.commands.list()) {
        if (!before.has(process.pid)) await sandbox.commands.kill(process.pid)
      }
    }
  },
  testDir: async ({ sandbox }, use) => {
    const dir = `/home/user/${uniqueName()}`
    await sandbox.files.makeDir(dir)
    try {
      await use(dir)
    } finally {
      await sandbox.commands.run(`rm -rf ${dir}`, { user: 'root' })
    }
  },
})

export { sandboxForEnvd } from '../support/sdk-sandbox.js'
