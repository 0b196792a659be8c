import { expect } from 'vitest'
import { sandboxTest, uniqueName } from '../../setup.js'

sandboxTest('connect attaches to a running command by pid', async ({ sandbox }) => {
  const handle = await sandbox.commands.run('read line; echo "got $line"; exit 3', {
    background: true,
    stdin: true,
  })
  const seen: string[] = []
  const attached = await sandbox.commands.connect(handle.pid, {
    onStdout: (d) => void seen.push(d),
  })
  expect(attached.pid).toBe(handle.pid)
  await attached.sendStdin('hello\n')
  const error = await attached.wait().catch((e: unknown) => e)
  expect(attached.exitCode).toBe(3)
  expect(seen.join('')).toBe('got hello\n')
  expect(String(error)).toContain('exit status 3')
})

sandboxTest('a command that exited moments ago can still be connected to', async ({ sandbox }) => {
  const handle = await sandbox.commands.run('echo done', { background: true })
  await handle.wait()
  const late = await sandbox.commands.connect(handle.pid)
  const result = await late.wait()
  expect(result.exitCode).toBe(0)
  // Output is not replayed: nobody was subscribed to the new stream when it was written.
  expect(result.stdout).toBe('')
})

sandboxTest('list shows running commands with their config until they end', async ({ sandbox }) => {
  const marker = uniqueName()
  const handle = await sandbox.commands.run(`sleep 30 # ${marker}`, {
    background: true,
    envs: { SBT_MARK: marker },
    cwd: '/tmp',
  })
  const listed = (await sandbox.commands.list()).find((p) => p.pid === handle.pid)
  expect(listed).toMatchObject({
    pid: handle.pid,
    cmd: '/bin/bash',
    args: ['-l', '-c', `sleep 30 # ${marker}`],
    envs: { SBT_MARK: marker },
    cwd: '/tmp',
  })
  await handle.kill()
  const pids = async () => (await sandbox.commands.list()).map((p) => p.pid)
  await expect.poll(pids, { timeout: 5000 }).not.toContain(handle.pid)
})

sandboxTest('connecting to an unknown pid is a NotFoundError', async ({ sandbox }) => {
  await expect(sandbox.commands.connect(999_999)).rejects.toThrow(
    'process with pid 999999 not found',
  )
})
