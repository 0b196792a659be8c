import { closeSync, openSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asUser } from '../../../../src/envd/fs/as-user.js'

const USER = { uid: 1000, gid: 1000, groups: [1000, 27] }

describe.runIf(process.geteuid?.() === 0)('asUser', () => {
  let dir = ''
  let secret = ''

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sbt-as-user-'))
    secret = path.join(dir, 'secret')
    await writeFile(secret, 'root only', { mode: 0o600 })
  })
  afterAll(async () => rm(dir, { recursive: true, force: true }))

  it("runs the work with the user's ids and groups, and root's again after", () => {
    const inside = asUser(USER, () => ({
      uid: process.geteuid?.(),
      gid: process.getegid?.(),
      groups: process.getgroups?.(),
    }))
    // The kernel keeps a group list sorted.
    expect(inside).toEqual({ uid: 1000, gid: 1000, groups: [27, 1000] })
    expect(process.geteuid?.()).toBe(0)
    expect(process.getegid?.()).toBe(0)
    expect(process.getgroups?.()).not.toContain(1000)
  })

  it('lets the kernel refuse the user what root may do', () => {
    expect(() => asUser(USER, () => closeSync(openSync(secret, 'r')))).toThrow(/EACCES/)
    expect(() => closeSync(openSync(secret, 'r'))).not.toThrow()
  })

  it('switches the calling thread only: the thread pool keeps root meanwhile', async () => {
    // Queued to the thread pool while the main thread is the user's, and opened there before
    // the switch back. Were the switch process-wide, as glibc's seteuid is, the open would
    // fail with EACCES.
    const read = asUser(USER, () => {
      const pending = readFile(secret, 'utf8')
      const until = Date.now() + 100
      while (Date.now() < until) {
        // Holds the main thread switched while the pool opens the file.
      }
      return pending
    })
    await expect(read).resolves.toBe('root only')
  })

  it('throws what the kernel refuses, and leaves root in place', () => {
    // (gid_t)-1 means "unchanged" to the id calls and is refused in a group list.
    expect(() => asUser({ uid: 1000, gid: 1000, groups: [-1] }, () => undefined)).toThrow(
      'setgroups: Invalid argument',
    )
    expect(process.geteuid?.()).toBe(0)
  })
})
