import { InvalidArgumentError } from 'e2b'
import { describe, expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

describe('file metadata (X-Metadata-* → user.e2b.* xattrs)', () => {
  sandboxTest('round-trips through write and getInfo', async ({ sandbox, testDir }) => {
    const metadata = { author: 'mish', purpose: 'upload' }
    const info = await sandbox.files.write(`${testDir}/m.txt`, 'content', { metadata })
    expect(info.metadata).toEqual(metadata)
    expect((await sandbox.files.getInfo(`${testDir}/m.txt`)).metadata).toEqual(metadata)
  })

  sandboxTest('round-trips through an octet-stream upload', async ({ sandbox, testDir }) => {
    const metadata = { stage: 'raw' }
    const info = await sandbox.files.write(`${testDir}/o.txt`, 'content', {
      metadata,
      useOctetStream: true,
    })
    expect(info.metadata).toEqual(metadata)
    expect((await sandbox.files.getInfo(`${testDir}/o.txt`)).metadata).toEqual(metadata)
  })

  sandboxTest('lower-cases keys, as HTTP header names are', async ({ sandbox, testDir }) => {
    const info = await sandbox.files.write(`${testDir}/c.txt`, 'x', { metadata: { Author: 'A' } })
    expect(info.metadata).toEqual({ author: 'A' })
  })

  sandboxTest('is absent when none was sent', async ({ sandbox, testDir }) => {
    const info = await sandbox.files.write(`${testDir}/n.txt`, 'x')
    expect(info.metadata).toBeUndefined()
    expect((await sandbox.files.getInfo(`${testDir}/n.txt`)).metadata).toBeUndefined()
  })

  sandboxTest('applies to every file of a multi-file write', async ({ sandbox, testDir }) => {
    const metadata = { source: 'suite' }
    const infos = await sandbox.files.writeFiles(
      [
        { path: `${testDir}/1.txt`, data: 'one' },
        { path: `${testDir}/2.txt`, data: 'two' },
      ],
      { metadata },
    )
    for (const info of infos) {
      expect(info.metadata).toEqual(metadata)
      expect((await sandbox.files.getInfo(info.path)).metadata).toEqual(metadata)
    }
  })

  sandboxTest('is replaced, not merged, by the next write', async ({ sandbox, testDir }) => {
    const file = `${testDir}/r.txt`
    await sandbox.files.write(file, 'first', { metadata: { author: 'mish', stage: 'one' } })
    await sandbox.files.write(file, 'second', { metadata: { stage: 'two' } })
    expect((await sandbox.files.getInfo(file)).metadata).toEqual({ stage: 'two' })
    await sandbox.files.write(file, 'third')
    expect((await sandbox.files.getInfo(file)).metadata).toBeUndefined()
  })

  sandboxTest('survives a rename', async ({ sandbox, testDir }) => {
    await sandbox.files.write(`${testDir}/old.txt`, 'x', { metadata: { tag: 'kept' } })
    const moved = await sandbox.files.rename(`${testDir}/old.txt`, `${testDir}/new.txt`)
    expect(moved.metadata).toEqual({ tag: 'kept' })
  })

  sandboxTest('rejects a key over 246 bytes and writes nothing', async ({ sandbox, testDir }) => {
    const write = sandbox.files.write(`${testDir}/long.txt`, 'x', {
      metadata: { ['k'.repeat(247)]: 'v' },
    })
    await expect(write).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(write).rejects.toThrow('longer than 246 bytes')
    expect(await sandbox.files.exists(`${testDir}/long.txt`)).toBe(false)
  })

  sandboxTest('rejects more than 4096 bytes in all', async ({ sandbox, testDir }) => {
    const large = { a: 'v'.repeat(1000), b: 'v'.repeat(1000) }
    const info = await sandbox.files.write(`${testDir}/large.txt`, 'x', { metadata: large })
    expect(info.metadata).toEqual(large)
    // Each key costs 9 bytes of "user.e2b." plus its own length plus its value's: 4097 here.
    const tooMuch = { a: 'v'.repeat(2038), b: 'v'.repeat(2039) }
    const write = sandbox.files.write(`${testDir}/big.txt`, 'x', { metadata: tooMuch })
    await expect(write).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(write).rejects.toThrow('4097 bytes, more than the 4096 allowed')
  })
})
