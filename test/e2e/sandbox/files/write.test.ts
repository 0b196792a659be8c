import { InvalidArgumentError, SandboxError } from 'e2b'
import { describe, expect } from 'vitest'
import { sandboxTest, TEST_USER, uniqueName } from '../../setup.js'

function streamOf(...parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part))
      controller.close()
    },
  })
}

describe('files.write', () => {
  sandboxTest('writes a string and answers with its entry', async ({ sandbox, testDir }) => {
    const info = await sandbox.files.write(`${testDir}/a.txt`, 'string data')
    expect(info).toEqual({ name: 'a.txt', path: `${testDir}/a.txt`, type: 'file' })
    expect(await sandbox.files.read(`${testDir}/a.txt`)).toBe('string data')
  })

  sandboxTest(
    'writes an ArrayBuffer, a Blob and a ReadableStream',
    async ({ sandbox, testDir }) => {
      const bytes = new Uint8Array([0, 1, 2, 253, 254, 255])
      await sandbox.files.write(`${testDir}/buffer.bin`, bytes.slice().buffer)
      await sandbox.files.write(`${testDir}/blob.txt`, new Blob(['blob ', 'data']))
      await sandbox.files.write(`${testDir}/stream.txt`, streamOf('streamed ', 'in ', 'parts'))
      const read = await sandbox.files.read(`${testDir}/buffer.bin`, { format: 'bytes' })
      expect([...read]).toEqual([...bytes])
      expect(await sandbox.files.read(`${testDir}/blob.txt`)).toBe('blob data')
      expect(await sandbox.files.read(`${testDir}/stream.txt`)).toBe('streamed in parts')
    },
  )

  sandboxTest('writes several files in one call', async ({ sandbox, testDir }) => {
    const infos = await sandbox.files.writeFiles([
      { path: `${testDir}/m/one.txt`, data: 'one' },
      { path: `${testDir}/m/two.txt`, data: new Blob(['two']) },
      { path: `${testDir}/three.txt`, data: 'three' },
    ])
    expect(infos.map((i) => i.path)).toEqual([
      `${testDir}/m/one.txt`,
      `${testDir}/m/two.txt`,
      `${testDir}/three.txt`,
    ])
    expect(await sandbox.files.read(`${testDir}/m/two.txt`)).toBe('two')
  })

  sandboxTest('overwrites an existing file', async ({ sandbox, testDir }) => {
    await sandbox.files.write(`${testDir}/o.txt`, 'a much longer first version')
    await sandbox.files.write(`${testDir}/o.txt`, 'second')
    expect(await sandbox.files.read(`${testDir}/o.txt`)).toBe('second')
  })

  sandboxTest(
    'creates missing parent directories, owned by the user',
    async ({ sandbox, testDir }) => {
      await sandbox.files.write(`${testDir}/x/y/z/deep.txt`, 'deep')
      expect(await sandbox.files.read(`${testDir}/x/y/z/deep.txt`)).toBe('deep')
      for (const entry of [`${testDir}/x`, `${testDir}/x/y/z`, `${testDir}/x/y/z/deep.txt`]) {
        const info = await sandbox.files.getInfo(entry)
        expect([info.owner, info.group]).toEqual([TEST_USER.name, TEST_USER.name])
      }
      const info = await sandbox.files.getInfo(`${testDir}/x/y/z/deep.txt`)
      expect(info.permissions).toBe('-rw-r--r--')
    },
  )

  sandboxTest('owns a file as the user who wrote it', async ({ sandbox, testDir }) => {
    await sandbox.files.write(`${testDir}/mine.txt`, 'user')
    await sandbox.files.write(`${testDir}/roots.txt`, 'root', { user: 'root' })
    expect((await sandbox.files.getInfo(`${testDir}/mine.txt`)).owner).toBe(TEST_USER.name)
    expect((await sandbox.files.getInfo(`${testDir}/roots.txt`)).owner).toBe('root')
    const stat = await sandbox.commands.run(`stat -c %U:%G:%a ${testDir}/roots.txt`)
    expect(stat.stdout.trim()).toBe('root:root:644')
  })

  sandboxTest('writes with gzip and with octet-stream', async ({ sandbox, testDir }) => {
    const info = await sandbox.files.write(`${testDir}/gz.txt`, 'gzipped upload', { gzip: true })
    expect(info.path).toBe(`${testDir}/gz.txt`)
    await sandbox.files.writeFiles(
      [
        { path: `${testDir}/gz1.txt`, data: 'first' },
        { path: `${testDir}/gz2.txt`, data: 'second' },
      ],
      { gzip: true },
    )
    await sandbox.files.write(`${testDir}/octet.txt`, 'raw', { useOctetStream: true })
    expect(await sandbox.files.read(`${testDir}/gz.txt`)).toBe('gzipped upload')
    expect(await sandbox.files.read(`${testDir}/gz2.txt`)).toBe('second')
    expect(await sandbox.files.read(`${testDir}/octet.txt`)).toBe('raw')
  })

  sandboxTest('writing to a directory is an InvalidArgumentError', async ({ sandbox, testDir }) => {
    const write = sandbox.files.write(testDir, 'nope')
    await expect(write).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(write).rejects.toThrow(`path '${testDir}' is a directory`)
  })

  sandboxTest(
    'the user creates a new file in /root, as on E2B, but cannot overwrite root’s',
    async ({ sandbox }) => {
      const target = `/root/${uniqueName()}.conf`
      await sandbox.files.write(target, 'root’s', { user: 'root' })
      try {
        const denied = sandbox.files.write(target, 'x')
        await expect(denied).rejects.toBeInstanceOf(SandboxError)
        await expect(denied).rejects.toThrow(`403: permission denied: cannot write '${target}'`)
        expect(await sandbox.files.read(target, { user: 'root' })).toBe('root’s')
        // A new name is created by envd's root for the user, as E2B's envd (root) does.
        await sandbox.files.write(`${target}.new`, 'user’s')
        const owner = await sandbox.commands.run(`stat -c %U ${target}.new`, { user: 'root' })
        expect(owner.stdout).toBe('user\n')
        expect(await sandbox.files.read(`${target}.new`, { user: 'root' })).toBe('user’s')
      } finally {
        await sandbox.commands.run(`rm -f ${target} ${target}.new`, { user: 'root' })
      }
    },
  )

  sandboxTest('an upload cut off midway leaves nothing behind', async ({ sandbox, testDir }) => {
    const controller = new AbortController()
    let sent = 0
    const endless = new ReadableStream<Uint8Array>({
      async pull(stream) {
        sent += 1
        if (sent === 8) controller.abort()
        await new Promise((resolve) => setTimeout(resolve, 10))
        stream.enqueue(new Uint8Array(64 * 1024))
      },
    })
    const write = sandbox.files.write(`${testDir}/cut.bin`, endless, { signal: controller.signal })
    await expect(write).rejects.toThrow()
    await expect
      .poll(async () => (await sandbox.commands.run(`ls -A ${testDir}`)).stdout, { timeout: 5_000 })
      .toBe('')
  })
})
