import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkSubordinateIDs, parseSubordinateRanges } from '../../../src/agent/subordinate-ids.js'

describe('parseSubordinateRanges', () => {
  it('reads name:start:count lines and skips the rest', () => {
    expect(
      parseSubordinateRanges('alice:100000:65536\n# note\n\nbad line\n1001:165536:65536\n'),
    ).toEqual([
      { name: 'alice', start: 100_000, count: 65_536 },
      { name: '1001', start: 165_536, count: 65_536 },
    ])
  })
})

describe('checkSubordinateIDs', () => {
  let dir = ''
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sbt-subids-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("accepts Debian's ranges and a missing file", async () => {
    const file = path.join(dir, 'subuid-debian')
    await writeFile(file, 'alice:100000:65536\nbob:165536:65536\n')
    await expect(checkSubordinateIDs([file, path.join(dir, 'none')])).resolves.toBeUndefined()
  })

  it('refuses a range reaching into the sandbox IDs, naming it', async () => {
    const file = path.join(dir, 'subgid-wide')
    await writeFile(file, 'alice:100000:65536\ncarol:2147000000:1000000\n')
    await expect(checkSubordinateIDs([file])).rejects.toThrow(
      `${file} grants 'carol' host IDs 2147000000-2147999999, which overlap the IDs Sandbar gives sandboxes (2147483648-4294967294); move that range below 2147483648`,
    )
  })
})
