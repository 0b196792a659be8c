import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { compressPages, decompressPages } from '../../../../src/agent/checkpoint/page-images.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'sbt-pages-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('page images', () => {
  it('compresses the memory pages alone, and gives them back whole with their mode', async () => {
    // Memory as a process has it: mostly zeros, some random bytes.
    const pages = Buffer.concat([Buffer.alloc(4 << 20), randomBytes(64 << 10)])
    await writeFile(path.join(dir, 'pages-1.img'), pages, { mode: 0o640 })
    await writeFile(path.join(dir, 'core-1.img'), 'core')
    await compressPages(dir)
    expect((await readdir(dir)).sort()).toEqual(['core-1.img', 'pages-1.img.zst'])
    expect((await stat(path.join(dir, 'pages-1.img.zst'))).size).toBeLessThan(pages.length / 10)

    await decompressPages(dir)
    expect((await readdir(dir)).sort()).toEqual(['core-1.img', 'pages-1.img'])
    expect((await readFile(path.join(dir, 'pages-1.img'))).equals(pages)).toBe(true)
    expect((await stat(path.join(dir, 'pages-1.img'))).mode & 0o777).toBe(0o640)
  })

  it('leaves memory that does not compress as it is, for a resume that need not decompress it', async () => {
    const pages = randomBytes(1 << 20)
    await writeFile(path.join(dir, 'pages-3.img'), pages)
    await compressPages(dir)
    expect(await readdir(dir)).toEqual(['pages-3.img'])
    expect((await readFile(path.join(dir, 'pages-3.img'))).equals(pages)).toBe(true)
  })

  it('keeps the page image a crash left beside a partial compressed copy', async () => {
    const pages = randomBytes(1 << 20)
    await writeFile(path.join(dir, 'pages-2.img'), pages)
    await writeFile(path.join(dir, 'pages-2.img.zst'), 'cut short')
    await decompressPages(dir)
    expect(await readdir(dir)).toEqual(['pages-2.img'])
    expect((await readFile(path.join(dir, 'pages-2.img'))).equals(pages)).toBe(true)
  })
})
