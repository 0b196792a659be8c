import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { newcArchive } from '../../cgroup-v2/newc-archive.js'

let scratch = ''

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true })
})

describe('newcArchive', () => {
  it('packs files, modes, directories and symlinks that busybox cpio unpacks as they were', async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'sbt-newc-'))
    const source = path.join(scratch, 'source')
    await mkdir(path.join(source, 'bin'), { recursive: true })
    await writeFile(path.join(source, 'init'), '#!/bin/sh\n', { mode: 0o755 })
    await writeFile(path.join(source, 'bin', 'odd'), 'abc')
    await symlink('../init', path.join(source, 'bin', 'link'))
    const target = path.join(scratch, 'target')
    await mkdir(target)
    execFileSync('busybox', ['cpio', '-i'], { cwd: target, input: await newcArchive(source) })
    expect(await readFile(path.join(target, 'init'), 'utf8')).toBe('#!/bin/sh\n')
    expect((await stat(path.join(target, 'init'))).mode & 0o777).toBe(0o755)
    expect(await readFile(path.join(target, 'bin', 'odd'), 'utf8')).toBe('abc')
    expect(await readlink(path.join(target, 'bin', 'link'))).toBe('../init')
  })
})
