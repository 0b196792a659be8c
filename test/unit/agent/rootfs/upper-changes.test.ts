import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setAttribute } from 'fs-xattr'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runHostCommand } from '../../../../src/agent/host-command.js'
import { upperChanges } from '../../../../src/agent/rootfs/upper-changes.js'

let root: string
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'sbt-upper-'))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

/** Makes `files` (paths ending in / are directories, `whiteout` entries 0:0 devices) in `dir`. */
async function tree(dir: string, files: Record<string, string>): Promise<string> {
  const base = path.join(root, dir)
  await mkdir(base, { recursive: true })
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(base, name)
    await mkdir(path.dirname(file), { recursive: true })
    if (name.endsWith('/')) await mkdir(file, { recursive: true })
    else if (content === 'whiteout') await runHostCommand('mknod', [file, 'c', '0', '0'])
    else await writeFile(file, content)
  }
  return base
}

describe('upper layer changes', () => {
  it('tells added, modified and deleted entries against the layer stack', async () => {
    const lowest = await tree('l1', { 'etc/a': '1', 'etc/gone': '1', 'opt/old/x': '1' })
    const higher = await tree('l2', { 'etc/a': 'whiteout' })
    const upper = await tree('upper', {
      'etc/a': 'back again',
      'etc/gone': 'whiteout',
      'etc/new': 'n',
      'opt/old/y': 'y',
      'srv/': '',
    })
    await setAttribute(path.join(upper, 'opt/old'), 'trusted.overlay.opaque', 'y')
    expect(await upperChanges(upper, [lowest, higher])).toEqual([
      // The higher layer deleted it, so the sandbox's file is new.
      { path: '/etc/a', kind: 'added', type: 'file' },
      { path: '/etc/gone', kind: 'deleted', type: 'other' },
      { path: '/etc/new', kind: 'added', type: 'file' },
      // Replaced as a whole (opaque): what is under it is new, whatever the layers hold.
      { path: '/opt/old', kind: 'modified', type: 'directory' },
      { path: '/opt/old/y', kind: 'added', type: 'file' },
      { path: '/srv', kind: 'added', type: 'directory' },
    ])
  })
})
