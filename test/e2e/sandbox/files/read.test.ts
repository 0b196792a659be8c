import {
  AuthenticationError,
  FileNotFoundError,
  InvalidArgumentError,
  NotFoundError,
  SandboxError,
} from 'e2b'
import { describe, expect } from 'vitest'
import { sandboxTest, uniqueName } from '../../setup.js'

/** Every byte value, twice: text decoding would mangle it, so it proves a binary-safe path. */
const binary = new Uint8Array(512).map((_, i) => i % 256)

async function collect(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return Buffer.concat(chunks)
}

describe('files.read', () => {
  sandboxTest('reads text, relative to the home directory', async ({ sandbox, testDir }) => {
    const name = `${testDir.replace('/home/user/', '')}/hello.txt`
    await sandbox.files.write(name, 'Hello, world!')
    expect(await sandbox.files.read(name)).toBe('Hello, world!')
    expect(await sandbox.files.read(`~/${name}`)).toBe('Hello, world!')
  })

  sandboxTest('reads bytes, a blob and a stream', async ({ sandbox, testDir }) => {
    const file = `${testDir}/binary.bin`
    await sandbox.files.write(file, binary.slice().buffer)
    const bytes = await sandbox.files.read(file, { format: 'bytes' })
    expect(bytes).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(bytes).equals(Buffer.from(binary))).toBe(true)
    const blob = await sandbox.files.read(file, { format: 'blob' })
    expect(Buffer.from(await blob.arrayBuffer()).equals(Buffer.from(binary))).toBe(true)
    const stream = await sandbox.files.read(file, { format: 'stream' })
    expect((await collect(stream)).equals(Buffer.from(binary))).toBe(true)
  })

  sandboxTest('reads with gzip content encoding', async ({ sandbox, testDir }) => {
    const file = `${testDir}/gz.txt`
    const content = 'compress me '.repeat(1000)
    await sandbox.files.write(file, content)
    expect(await sandbox.files.read(file, { gzip: true })).toBe(content)
    const bytes = await sandbox.files.read(file, { format: 'bytes', gzip: true })
    expect(new TextDecoder().decode(bytes)).toBe(content)
  })

  sandboxTest('reads an empty file as an empty string', async ({ sandbox, testDir }) => {
    await sandbox.files.write(`${testDir}/empty.txt`, '')
    expect(await sandbox.files.read(`${testDir}/empty.txt`)).toBe('')
    expect(await sandbox.files.read(`${testDir}/empty.txt`, { format: 'bytes' })).toHaveLength(0)
  })

  sandboxTest('a missing file is a FileNotFoundError', async ({ sandbox, testDir }) => {
    const missing = sandbox.files.read(`${testDir}/missing.txt`)
    await expect(missing).rejects.toBeInstanceOf(FileNotFoundError)
    await expect(missing).rejects.toBeInstanceOf(NotFoundError)
    await expect(missing).rejects.toThrow(`path '${testDir}/missing.txt' does not exist`)
  })

  sandboxTest('a directory is an InvalidArgumentError', async ({ sandbox, testDir }) => {
    const read = sandbox.files.read(testDir)
    await expect(read).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(read).rejects.toThrow(`path '${testDir}' is a directory`)
  })

  sandboxTest('an unknown user is an AuthenticationError', async ({ sandbox, testDir }) => {
    const read = sandbox.files.read(`${testDir}/x`, { user: 'ghost' })
    await expect(read).rejects.toBeInstanceOf(AuthenticationError)
    await expect(read).rejects.toThrow("error looking up user 'ghost'")
  })

  sandboxTest('the user cannot read what only root may', async ({ sandbox }) => {
    const secret = `/root/${uniqueName()}.txt`
    await sandbox.files.write(secret, 'root only', { user: 'root' })
    try {
      await sandbox.commands.run(`chmod 600 ${secret}`, { user: 'root' })
      expect(await sandbox.files.read(secret, { user: 'root' })).toBe('root only')
      const denied = sandbox.files.read(secret)
      await expect(denied).rejects.toBeInstanceOf(SandboxError)
      await expect(denied).rejects.toThrow(`403: permission denied: cannot read '${secret}'`)
    } finally {
      await sandbox.files.remove(secret, { user: 'root' })
    }
  })
})
