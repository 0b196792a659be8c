import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readOutputLines } from '../../../src/agent/sandbox-output.js'

let dir: string
let file: string

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'sbt-output-'))
  file = path.join(dir, 'output.log')
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe("reading a sandbox's output", () => {
  it('returns complete lines and leaves a line still being written for the next read', async () => {
    await writeFile(file, 'one\ntwo\nthr')
    expect(await readOutputLines(file, 0)).toEqual({ lines: ['one', 'two'], bytesRead: 8 })
    expect(await readOutputLines(file, 8)).toEqual({ lines: [], bytesRead: 8 })
    await appendFile(file, 'ee\n\nfour\n')
    expect(await readOutputLines(file, 8)).toEqual({ lines: ['three', 'four'], bytesRead: 20 })
    expect(await readOutputLines(file, 20)).toEqual({ lines: [], bytesRead: 20 })
  })

  it('counts bytes, not characters', async () => {
    await writeFile(file, 'héllo ✓\nnext\n')
    const first = await readOutputLines(file, 0)
    expect(first).toEqual({
      lines: ['héllo ✓', 'next'],
      bytesRead: Buffer.byteLength('héllo ✓\nnext\n'),
    })
  })

  it('has nothing to read before the file exists', async () => {
    expect(await readOutputLines(file, 0)).toEqual({ lines: [], bytesRead: 0 })
  })

  it('reads at most 1 MiB at once, and takes a longer line whole rather than stalling', async () => {
    const long = 'x'.repeat(1024 * 1024 + 10)
    await writeFile(file, `${long}\nafter\n`)
    const first = await readOutputLines(file, 0)
    expect(first.lines).toEqual(['x'.repeat(1024 * 1024)])
    expect(await readOutputLines(file, first.bytesRead)).toEqual({
      lines: ['x'.repeat(10), 'after'],
      bytesRead: Buffer.byteLength(long) + 7,
    })
  })
})
