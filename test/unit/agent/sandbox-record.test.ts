import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type SandboxRecord, SandboxRecords } from '../../../src/agent/sandbox-record.js'

const record: SandboxRecord = {
  sandboxID: 'ir1',
  templateID: 'base',
  runtime: 'crun',
  slot: 3,
  idMap: { hostID: 1_000_000, size: 65_536 },
  cpuCount: 2,
  memoryMB: 512,
  diskSizeMB: 1024,
  envVars: {},
  egress: { allowOut: [], denyOut: [] },
  state: 'running',
  createdAt: '2026-11-26T00:00:00.000Z',
}

describe('SandboxRecords', () => {
  let root = ''
  let records: SandboxRecords
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'sbt-records-'))
    records = new SandboxRecords(root)
  })
  afterEach(async () => rm(root, { recursive: true, force: true }))

  it('reads back each save, the latest one', async () => {
    await records.save(record)
    expect(await records.read('ir1')).toEqual(record)
    await records.save({ ...record, state: 'paused' })
    expect((await records.read('ir1'))?.state).toBe('paused')
  })

  it('sees a file another process wrote in place of the one it read', async () => {
    await records.save(record)
    expect((await records.read('ir1'))?.slot).toBe(3)
    // Another agent over the same directory (a restart's reconcile) saves its own version.
    await new SandboxRecords(root).save({ ...record, slot: 4 })
    expect((await records.read('ir1'))?.slot).toBe(4)
  })

  it('treats a torn or corrupt file as no record, and a removed one as gone', async () => {
    await records.save(record)
    await records.read('ir1')
    await writeFile(path.join(records.dir('ir1'), 'sandbox.json'), '{"sandboxID": "ir1", "tem')
    expect(await records.read('ir1')).toBeUndefined()
    await records.save(record)
    await records.remove('ir1')
    expect(await records.read('ir1')).toBeUndefined()
    expect(await records.all()).toEqual([])
  })
})
