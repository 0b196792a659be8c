import { CommandExitError, NotFoundError, Sandbox } from 'e2b-oldest'
import { describe, expect, inject, it } from 'vitest'
import { uniqueName } from '../setup.js'

// e2b@2.0.1, the oldest 2.x Sandbar supports, installed under the npm alias `e2b-oldest`. It
// predates `E2B_SANDBOX_URL`, so its debug mode only reaches envd on port 49983, and it sends
// `user` explicitly on every call (it treats envd as older than 0.4.0).
const onDebugPort = new URL(inject('envdUrl')).port === '49983'

describe.skipIf(!onDebugPort)('the oldest supported SDK, e2b@2.0.1', () => {
  it('runs commands as the default user and reports failures', async () => {
    const sandbox = await Sandbox.create()
    const result = await sandbox.commands.run('echo "$USER in $PWD"')
    expect(result.stdout).toBe('user in /home/user\n')
    const failure = sandbox.commands.run('exit 3')
    await expect(failure).rejects.toBeInstanceOf(CommandExitError)
    await expect(failure).rejects.toMatchObject({ exitCode: 3 })
  })

  it('writes, lists, reads and removes files', async () => {
    const sandbox = await Sandbox.create()
    const dir = `/home/user/${uniqueName()}`
    try {
      await sandbox.files.write(`${dir}/hello.txt`, 'hello from 2.0.1')
      expect((await sandbox.files.list(dir)).map((entry) => entry.name)).toEqual(['hello.txt'])
      expect(await sandbox.files.read(`${dir}/hello.txt`)).toBe('hello from 2.0.1')
    } finally {
      await sandbox.files.remove(dir)
    }
    await expect(sandbox.files.read(`${dir}/hello.txt`)).rejects.toBeInstanceOf(NotFoundError)
  })
})
