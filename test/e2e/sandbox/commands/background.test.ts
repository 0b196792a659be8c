import { setTimeout as sleep } from 'node:timers/promises'
import { CommandExitError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

sandboxTest(
  'a background command streams to callbacks and can be waited for',
  async ({ sandbox }) => {
    const stdout: string[] = []
    const stderr: string[] = []
    const handle = await sandbox.commands.run(
      'echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three',
      {
        background: true,
        onStdout: (data) => void stdout.push(data),
        onStderr: (data) => void stderr.push(data),
      },
    )
    expect(handle.pid).toBeGreaterThan(0)
    expect(handle.exitCode).toBeUndefined()
    const result = await handle.wait()
    expect(result.exitCode).toBe(0)
    expect(stdout.join('')).toBe('one\nthree\n')
    expect(stderr.join('')).toBe('two\n')
    expect(handle.stdout).toBe('one\nthree\n')
  },
)

sandboxTest('kill ends a background command and its children', async ({ sandbox }) => {
  const handle = await sandbox.commands.run('sleep 300 & echo $!; wait', { background: true })
  await expect.poll(() => handle.stdout, { timeout: 5000 }).toMatch(/^\d+\n$/)
  const child = handle.stdout.trim()
  expect(await handle.kill()).toBe(true)
  const error = await handle.wait().catch((e: unknown) => e)
  expect(error).toBeInstanceOf(CommandExitError)
  if (error instanceof CommandExitError) {
    expect(error.exitCode).toBe(-1)
    expect(error.error).toBe('signal: killed')
  }
  // The orphaned grandchild is killed with its group and reaped by the sandbox's init.
  const state = async () =>
    (await sandbox.commands.run(`cat /proc/${child}/stat 2>/dev/null || true`)).stdout
  await expect.poll(state, { timeout: 5000 }).toBe('')
})

sandboxTest('commands.kill answers false for an unknown pid', async ({ sandbox }) => {
  expect(await sandbox.commands.kill(999_999)).toBe(false)
})

sandboxTest('disconnecting does not kill the command', async ({ sandbox }) => {
  const handle = await sandbox.commands.run('sleep 30', { background: true, timeoutMs: 0 })
  await handle.disconnect()
  await sleep(300)
  const listed = await sandbox.commands.list()
  expect(listed.map((p) => p.pid)).toContain(handle.pid)
  expect(await sandbox.commands.kill(handle.pid)).toBe(true)
})
