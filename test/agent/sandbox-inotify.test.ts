import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHostCommand } from '../../src/agent/host-command.js'
import type { SandboxInfo } from '../../src/agent/index.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { sandboxRequest, startTestAgent, type TestAgent } from './agent-fixture.js'

// Issue 9 item 9: the kernel counts inotify instances per user of the user namespace's
// owner, so every sandbox must have a budget of its own, apart from the host's root and from
// other sandboxes.

/** Takes inotify instances until the kernel refuses, prints how many and why, then holds them. */
const HOG = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fds = []
while len(fds) < 100000:
    fd = libc.inotify_init()
    if fd < 0:
        break
    fds.append(fd)
print(len(fds), os.strerror(ctypes.get_errno()), flush=True)
time.sleep(float(sys.argv[1]))
`
const ONE = `
import ctypes, os
fd = ctypes.CDLL(None, use_errno=True).inotify_init()
print("ok" if fd >= 0 else os.strerror(ctypes.get_errno()))
`

let test: TestAgent
let a: SandboxInfo
let b: SandboxInfo

beforeAll(async () => {
  test = await startTestAgent()
  a = await test.agent.create(sandboxRequest())
  b = await test.agent.create(sandboxRequest())
})

afterAll(async () => {
  const leaks = await test?.dispose()
  expect(leaks).toEqual([])
})

describe('inotify budgets', () => {
  it("one sandbox exhausting its instances leaves other sandboxes' and the host's", async () => {
    const hogger = sandboxForEnvd(a.envdURL)
    await hogger.files.write('/home/user/hog.py', HOG)
    const hog = await hogger.commands.run('python3 hog.py 20', {
      background: true,
      timeoutMs: 30_000,
    })
    try {
      // The line comes once every instance it could take is held, until the sleep ends.
      await expect.poll(() => hog.stdout, { timeout: 15_000, interval: 50 }).toMatch(/\n$/)
      const [taken = '', ...reason] = hog.stdout.trim().split(' ')
      expect(reason.join(' ')).toBe('Too many open files')
      expect(Number(taken)).toBeGreaterThan(0)
      const other = sandboxForEnvd(b.envdURL)
      await other.files.write('/home/user/one.py', ONE)
      expect((await other.commands.run('python3 one.py')).stdout).toBe('ok\n')
      expect((await other.commands.run('python3 one.py', { user: 'root' })).stdout).toBe('ok\n')
      const host = await runHostCommand('/usr/bin/python3', ['-'], { input: ONE })
      expect(host).toBe('ok\n')
    } finally {
      await hog.kill()
    }
  })
})
