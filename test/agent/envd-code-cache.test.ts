import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { createClient } from '@connectrpc/connect'
import { createConnectTransport } from '@connectrpc/connect-node'
import { describe, expect, inject, it } from 'vitest'
import { toolboxAt } from '../../src/agent/rootfs/toolbox.js'
import { Process } from '../../src/envd/gen/process/process_pb.js'
import { waitForEnvdHealth } from '../e2e/envd-namespace.js'
import { freePort } from '../support/serve-process.js'

// envd runs its bundle with the V8 code cache the build wrote (code-cache-loader.ts). V8 rejects
// the cache when node's command line carries a flag that changes what it compiles, and every
// sandbox start then compiles from source, ~20 ms slower, with nothing failing but envd's
// warning. Sandboxes start envd with the node flags toolbox.ts gives, shared memory or not.
describe("envd's code cache", () => {
  for (const shareEnvdMemory of [false, true]) {
    it(`is accepted under the node flags sandboxes start envd with${shareEnvdMemory ? ', memory shared' : ''}`, async () => {
      const envd = await startBuiltEnvd(shareEnvdMemory)
      try {
        await waitForEnvdHealth(envd.url, envd.child)
      } finally {
        await envd.stop()
      }
      expect(envd.stderr()).toBe('')
    })
  }

  // Node's own modules carry a code cache too, which V8 rejects once envd changes a V8 flag at
  // run time (its heap flags): each module loaded later compiles from source, in every sandbox.
  it("leaves node's own modules their cache while envd answers a sandbox's first commands", async () => {
    const envd = await startBuiltEnvd(false, { NODE_DEBUG_NATIVE: 'CODE_CACHE' })
    try {
      await waitForEnvdHealth(envd.url, envd.child)
      // As the build's own warm-up does: an envd started without a handover is not locked.
      await fetch(`${envd.url}/init`, { method: 'POST', body: '{}' })
      const processes = createClient(
        Process,
        createConnectTransport({ baseUrl: envd.url, httpVersion: '1.1' }),
      )
      const cmd = { cmd: '/bin/true', args: [], envs: {} }
      for (const pty of [undefined, { size: { cols: 80, rows: 24 } }]) {
        const events = []
        for await (const { event } of processes.start({ process: cmd, pty })) events.push(event)
        expect(events.at(-1)).toMatchObject({ event: { case: 'end', value: { exitCode: 0 } } })
      }
    } finally {
      await envd.stop()
    }
    const rejected = [...envd.stderr().matchAll(/Code cache of (\S+) .*is rejected/g)]
    expect(rejected.map(([, module]) => module)).toEqual([])
  })
})

interface BuiltEnvd {
  url: string
  child: ChildProcess
  stderr(): string
  stop(): Promise<void>
}

/** The build's envd on a free loopback port, with the node flags toolbox.ts gives sandboxes. */
async function startBuiltEnvd(
  shareEnvdMemory: boolean,
  env: Record<string, string> = {},
): Promise<BuiltEnvd> {
  const argv = toolboxAt('/toolbox', shareEnvdMemory).initArgs(49983)
  const nodeFlags = argv.slice(
    argv.findIndex((arg) => arg.endsWith('/bin/node')) + 1,
    argv.findIndex((arg) => arg.endsWith('/envd/envd.cjs')),
  )
  const entry = path.join(inject('envdBuildDir'), 'envd/envd.cjs')
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [...nodeFlags, entry, '--port', String(port), '--host', '127.0.0.1'],
    {
      env: { PATH: process.env.PATH, SANDBAR_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = once(child, 'exit')
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGKILL')
      await exited
    },
  }
}
