import { CommandExitError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

const encode = (text: string) => new TextEncoder().encode(text)

/** A PTY session whose decoded output accumulates in `output()`. */
function collector(): { onData: (data: Uint8Array) => void; output: () => string } {
  let text = ''
  const decoder = new TextDecoder()
  return {
    onData: (data) => {
      text += decoder.decode(data, { stream: true })
    },
    output: () => text,
  }
}

sandboxTest('pty.create runs an interactive shell fed by sendInput', async ({ sandbox }) => {
  const terminal = collector()
  const handle = await sandbox.pty.create({
    cols: 80,
    rows: 24,
    onData: terminal.onData,
    envs: { ABC: '123' },
  })
  await sandbox.pty.sendInput(handle.pid, encode('echo "abc=$ABC term=$TERM tty=$(tty)"; exit\n'))
  const result = await handle.wait()
  expect(result.exitCode).toBe(0)
  expect(terminal.output()).toContain('abc=123 term=xterm-256color tty=/dev/pts/')
})

sandboxTest('pty.resize changes the size the shell sees', async ({ sandbox }) => {
  const terminal = collector()
  const handle = await sandbox.pty.create({ cols: 100, rows: 30, onData: terminal.onData })
  await sandbox.pty.sendInput(handle.pid, encode('stty size\n'))
  await expect.poll(terminal.output, { timeout: 5000 }).toContain('30 100')
  await sandbox.pty.resize(handle.pid, { cols: 132, rows: 43 })
  await sandbox.pty.sendInput(handle.pid, encode('stty size; exit\n'))
  await handle.wait()
  expect(terminal.output()).toContain('43 132')
})

sandboxTest('a PTY runs as the chosen user in the chosen cwd', async ({ sandbox }) => {
  const terminal = collector()
  const handle = await sandbox.pty.create({
    cols: 80,
    rows: 24,
    onData: terminal.onData,
    user: 'root',
    cwd: '/tmp',
  })
  await sandbox.pty.sendInput(handle.pid, encode('echo "who=$(whoami) dir=$(pwd)"; exit\n'))
  await handle.wait()
  expect(terminal.output()).toContain('who=root dir=/tmp')
})

sandboxTest('pty.kill ends the session; an unknown pid answers false', async ({ sandbox }) => {
  const handle = await sandbox.pty.create({ cols: 80, rows: 24, onData: () => {} })
  expect((await sandbox.commands.list()).map((p) => p.pid)).toContain(handle.pid)
  expect(await sandbox.pty.kill(handle.pid)).toBe(true)
  const error = await handle.wait().catch((e: unknown) => e)
  expect(error).toBeInstanceOf(CommandExitError)
  if (error instanceof CommandExitError) expect(error.error).toBe('signal: killed')
  expect(await sandbox.pty.kill(999_999)).toBe(false)
})

sandboxTest('pty.connect attaches to a running session', async ({ sandbox }) => {
  const handle = await sandbox.pty.create({ cols: 80, rows: 24, onData: () => {} })
  await handle.disconnect()
  const terminal = collector()
  const attached = await sandbox.pty.connect(handle.pid, { onData: terminal.onData })
  await sandbox.pty.sendInput(handle.pid, encode('echo reattached; exit\n'))
  await attached.wait()
  expect(terminal.output()).toContain('reattached')
})
