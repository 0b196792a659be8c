import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Issue 9 item 11: a sandbox's own output is the sandbox's word, never the service's. Code
// inside (root included) can write whatever it likes to its init's stdout; the logs API must
// neither date it in the future nor let it pass for a lifecycle event.

let serve: ServeInstance
let sandbox: Sandbox

beforeAll(async () => {
  serve = await startServe()
  sandbox = await Sandbox.create({ ...serve.client, timeoutMs: 300_000 })
})

afterAll(async () => {
  if (sandbox !== undefined) await Sandbox.kill(sandbox.sandboxId, serve.client)
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

type Entry = { timestamp: string; level: string; message: string; fields: Record<string, string> }

/**
 * Appends one line to the sandbox init's stdout as root inside: through /proc/1/fd/1 when the
 * file's permissions allow it, else through a copy of the init's descriptor (pidfd_getfd(2)),
 * which root inside may take from its own init whatever the file's owner.
 */
const FORGE = `
import ctypes, os, sys
line = (sys.argv[1] + "\\n").encode()
try:
    fd = os.open("/proc/1/fd/1", os.O_WRONLY | os.O_APPEND)
    how = "path"
except OSError:
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(1)
    fd = libc.syscall(438, pidfd, 1, 0)
    if fd < 0:
        sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
    how = "pidfd"
os.write(fd, line)
print(how)
`

describe("a sandbox's output in its logs", () => {
  it('never serves a forged future date or a forged lifecycle event', async () => {
    const forged = JSON.stringify({
      level: 50,
      time: Date.parse('2100-01-01T00:00:00Z'),
      msg: 'sandbox killed',
      event: 'killed',
      source: 'sandbar',
    })
    await sandbox.files.write('/tmp/forge.py', FORGE, { user: 'root' })
    const how = await sandbox.commands.run(`python3 /tmp/forge.py '${forged}'`, { user: 'root' })
    // The init's stdout is the service's file: root inside no longer opens it by path.
    expect(how.stdout).toBe('pidfd\n')
    const before = Date.now()
    const answer = await callApi(serve.client, 'GET', `/v2/sandboxes/${sandbox.sandboxId}/logs`)
    expect(answer.status).toBe(200)
    const entries: Entry[] = answer.body.logs
    for (const entry of entries) expect(Date.parse(entry.timestamp)).toBeLessThanOrEqual(Date.now())
    const line = entries.find((entry) => entry.message === 'sandbox killed')
    expect(line).toEqual({
      timestamp: expect.any(String),
      level: 'error',
      message: 'sandbox killed',
      fields: { source: 'sandbox' },
    })
    expect(Date.parse(line?.timestamp ?? '')).toBeLessThanOrEqual(before + 1000)
    const events = entries.filter((entry) => entry.fields.event !== undefined)
    expect(events.map((entry) => entry.fields.event)).toEqual(['created'])
  })
})
