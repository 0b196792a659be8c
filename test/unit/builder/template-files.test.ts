import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTemplateFiles, TemplateFileLengthError } from '../../../src/builder/index.js'

let dir: string
const hash = 'a'.repeat(64)
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'sbt-files-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part)
}

describe('createTemplateFiles', () => {
  it('keeps an archive at <dir>/<templateID>/<hash>, 0600, and knows it is there', async () => {
    const files = createTemplateFiles(dir)
    expect(await files.has('tpl', hash)).toBe(false)
    await files.write('tpl', hash, chunks('ab', 'cd'), 4)
    const file = path.join(dir, 'tpl', hash)
    expect(await readFile(file, 'utf8')).toBe('abcd')
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect(await files.has('tpl', hash)).toBe(true)
    expect((await files.read('tpl', hash)).toString()).toBe('abcd')
  })

  it('says which archive was never uploaded when asked to read it', async () => {
    await expect(createTemplateFiles(dir).read('tpl', hash)).rejects.toThrow(
      `the files of hash ${hash} were never uploaded for template tpl`,
    )
  })

  it.each([
    [['abc'], 4, 'the body ended after 3 of its 4 bytes'],
    [['abc', 'de'], 4, 'the body is longer than its Content-Length of 4 bytes'],
  ])('keeps nothing of a body of the wrong length (%j for %d)', async (parts, length, message) => {
    const files = createTemplateFiles(dir)
    const writing = files.write('tpl', hash, chunks(...parts), length)
    await expect(writing).rejects.toThrow(TemplateFileLengthError)
    await expect(writing).rejects.toThrow(message)
    expect(await readdir(path.join(dir, 'tpl'))).toEqual([])
    expect(await files.has('tpl', hash)).toBe(false)
  })

  it('replaces an archive whole, and removes a template’s archives', async () => {
    const files = createTemplateFiles(dir)
    await files.write('tpl', hash, chunks('old'), 3)
    await files.write('tpl', hash, chunks('newer'), 5)
    expect(await readFile(path.join(dir, 'tpl', hash), 'utf8')).toBe('newer')
    await files.write('other', hash, chunks('x'), 1)
    await files.removeTemplate('tpl')
    expect(await files.has('tpl', hash)).toBe(false)
    expect(await files.has('other', hash)).toBe(true)
  })

  it('refuses names that would leave its directory', async () => {
    const files = createTemplateFiles(dir)
    await expect(files.write('..', hash, chunks('x'), 1)).rejects.toThrow('not a template ID')
    await expect(files.has('tpl', '../../etc')).rejects.toThrow('not a template ID')
  })
})
