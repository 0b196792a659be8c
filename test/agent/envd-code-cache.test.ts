import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { toolboxAt } from '../../src/agent/rootfs/toolbox.js'
import { waitForEnvdHealth } from '../e2e/envd-namespace.js'
import { freePort } from '../support/serve-process.js'

// envd runs its bundle with the V8 code cache the build wrote (code-cache-loader.ts). V8 rejects
// the cache when node's command line carries a flag that changes what it compiles, and every
// sandbox start then compiles from source, ~20 ms slower, with nothing failing but envd's
// warning. Sandboxes start envd with the node flags toolbox.ts gives, shared memory or not.
describe("envd's code cache", () => {
  for (const shareEnvdMemory of [false, true]) {
    it(`is accepted under the node flags sandboxes start envd with${shareEnvdMemory ? ', memory shared' : ''}`, async () => {
      const argv = toolboxAt('/toolbox', shareEnvdMemory).initArgs(49983)
      const nodeFlags = argv.slice(
        argv.findIndex((arg) => arg.endsWith('/bin/node')) + 1,
        argv.findIndex((arg) => arg.endsWith('/envd/envd.cjs')),
      )
      const entry = path.join(inject('envdBuildDir'), 'envd/envd.cjs')
      const port = await freePort()
      const envd = spawn(
        process.execPath,
        [...nodeFlags, entry, '--port', String(port), '--host', '127.0.0.1'],
        {
          env: { PATH: process.env.PATH, SANDBAR_LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      )
      let stderr = ''
      envd.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      const exited = once(envd, 'exit')
      try {
        await waitForEnvdHealth(`http://127.0.0.1:${port}`, envd)
      } finally {
        envd.kill('SIGKILL')
        await exited
      }
      expect(stderr).toBe('')
    })
  }
})
