import { SandboxError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

sandboxTest(
  'stdin: true lets a command read what sendStdin sends until closeStdin',
  async ({ sandbox }) => {
    const handle = await sandbox.commands.run('cat', { background: true, stdin: true })
    await sandbox.commands.sendStdin(handle.pid, 'Hello, ')
    await handle.sendStdin('!@#$%^&*()_+\nWorld')
    await sandbox.commands.sendStdin(handle.pid, '')
    await handle.closeStdin()
    const result = await handle.wait()
    expect(result.stdout).toBe('Hello, !@#$%^&*()_+\nWorld')
  },
)

sandboxTest(
  'stdin is closed by default: the command sees EOF and input is refused',
  async ({ sandbox }) => {
    const handle = await sandbox.commands.run('cat; echo eof; sleep 30', { background: true })
    await expect.poll(() => handle.stdout, { timeout: 5000 }).toBe('eof\n')
    const error = await sandbox.commands.sendStdin(handle.pid, 'x').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SandboxError)
    expect(String(error)).toContain('stdin not enabled or closed')
    await handle.kill()
  },
)

sandboxTest('input after closeStdin is refused', async ({ sandbox }) => {
  const handle = await sandbox.commands.run('sleep 30', { background: true, stdin: true })
  await handle.closeStdin()
  await expect(handle.sendStdin('late')).rejects.toThrow('stdin not enabled or closed')
  await handle.kill()
})
