import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { describe, expect, inject, it } from 'vitest'
import { runHostCommand } from '../../src/agent/host-command.js'
import { mountNetnsSysfs, netnsSysfsDir } from '../../src/agent/runtime/netns-sysfs.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import {
  hostLeaks,
  sandboxRequest,
  saveHalfMadeRecord,
  startTestAgent,
  type TestAgent,
  testAgentConfig,
} from './agent-fixture.js'

const sandboxID = () => `i${randomBytes(10).toString('hex')}`

describe('reconcile', () => {
  it('adopts the sandboxes of an agent that was SIGKILLed, and they keep working', async () => {
    const config = await testAgentConfig()
    const { dataDir, prefix } = config
    const id = sandboxID()
    const childFailure = await runAgentProcessUntilRunning(config, id).then(
      () => undefined,
      (error: unknown) => error,
    )
    // Started whatever the child got to: its reconcile and dispose remove what a child that
    // crashed half-way left, so a failure here leaks nothing either.
    const test = await startTestAgent({ dataDir, prefix })
    try {
      if (childFailure !== undefined) throw childFailure
      expect(test.agent.reconciled).toEqual({ adopted: [id], removed: [] })
      const info = await test.agent.get(id)
      expect(info?.state).toBe('running')
      const result = await sandboxForEnvd(info?.envdURL ?? '').commands.run('echo adopted')
      expect(result.stdout).toBe('adopted\n')
    } finally {
      expect(await test.dispose()).toEqual([])
    }
  })

  it('removes a half-created sandbox and orphaned host objects', async () => {
    const test = await startTestAgent()
    const { prefix, dataDir } = test.config
    await test.agent.close()
    const halfMade = sandboxID()
    const orphan = sandboxID()
    await saveHalfMadeRecord(dataDir, halfMade)
    // A crash between attaching the half-made sandbox's disk and mounting it.
    const image = `${dataDir}/sandboxes/${halfMade}/disk.img`
    await runHostCommand('truncate', ['-s', '64M', image])
    await runHostCommand('mkfs.ext4', ['-q', image])
    await runHostCommand('losetup', ['--find', image])
    await runHostCommand('ip', ['netns', 'add', `${prefix}-${halfMade}`])
    await runHostCommand('ip', ['netns', 'add', `${prefix}-${orphan}`])
    // A crash between the runtime's mount of the sandbox's sysfs and its unmount.
    await mountNetnsSysfs(
      `/run/netns/${prefix}-${halfMade}`,
      netnsSysfsDir(`${dataDir}/sandboxes/${halfMade}/bundle`),
    )

    const again = await startTestAgent({ dataDir, prefix })
    try {
      expect(again.agent.reconciled.adopted).toEqual([])
      expect([...again.agent.reconciled.removed].sort()).toEqual([halfMade, orphan].sort())
      expect(await hostLeaks(again.config)).toEqual([])
    } finally {
      expect(await again.dispose()).toEqual([])
    }
  })

  it('removes a sandbox its runtime lost, its processes with it, and starts', async () => {
    const test = await startTestAgent()
    const { prefix, dataDir } = test.config
    const lost = sandboxID()
    let again: TestAgent | undefined
    try {
      await test.agent.create(sandboxRequest({ sandboxID: lost }))
      await test.agent.close()
      // crun's state of the container gone, while tini and envd run on, holding the sandbox's
      // disk: its removal failed with EBUSY, and the agent with it.
      await rm(`${dataDir}/runtime/crun/${prefix}-${lost}`, { recursive: true })

      again = await startTestAgent({ dataDir, prefix })
      expect(again.agent.reconciled).toEqual({ adopted: [], removed: [lost] })
      expect(await hostLeaks(again.config)).toEqual([])
    } finally {
      expect(await (again ?? test).dispose()).toEqual([])
    }
  })

  it('removes a running sandbox whose record is corrupt, by name, and starts the others', async () => {
    const test = await startTestAgent()
    const { prefix, dataDir } = test.config
    const corrupt = sandboxID()
    const healthy = sandboxID()
    // Whichever agent got furthest cleans up, even when the second never starts.
    let again: TestAgent | undefined
    try {
      for (const id of [corrupt, healthy]) {
        await test.agent.create(sandboxRequest({ sandboxID: id }))
      }
      await test.agent.close()
      // A torn write: half of a record.
      const file = `${dataDir}/sandboxes/${corrupt}/sandbox.json`
      const text = await readFile(file, 'utf8')
      await writeFile(file, text.slice(0, text.length / 2))

      again = await startTestAgent({ dataDir, prefix })
      expect(again.agent.reconciled).toEqual({ adopted: [healthy], removed: [corrupt] })
      expect((await again.agent.list()).map((sandbox) => sandbox.sandboxID)).toEqual([healthy])
      await again.agent.kill(healthy)
      expect(await hostLeaks(again.config)).toEqual([])
    } finally {
      expect(await (again ?? test).dispose()).toEqual([])
    }
  })
})

/**
 * Runs test/agent/agent-process.ts until it reports sandboxID running, then SIGKILLs it: an
 * agent that dies mid-life. Rejects if the process ends first, at once rather than at the
 * test's timeout.
 */
async function runAgentProcessUntilRunning(
  config: Awaited<ReturnType<typeof testAgentConfig>>,
  sandboxID: string,
): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/agent/agent-process.ts',
      JSON.stringify(config),
      sandboxID,
      inject('baseLayerID'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = once(child, 'exit')
  try {
    const lines = createInterface({ input: child.stdout ?? process.stdin })
    const line = await Promise.race([
      once(lines, 'line').then(([text]) => String(text)),
      exited.then(([code, signal]) => ({ code, signal })),
    ])
    if (typeof line !== 'string') {
      throw new Error(
        `the agent process ended (${line.code ?? line.signal}) before its sandbox ran`,
      )
    }
    expect(JSON.parse(line)).toMatchObject({ sandboxID, state: 'running' })
  } finally {
    child.kill('SIGKILL')
    await exited
  }
}
