import { describe, expect, test } from 'vitest'
import {
  classifyBatch,
  type EntrySnapshot,
  type ObservedPath,
  type RawChange,
} from '../../../../src/envd/fs/watch-event-classifier.js'
import { EventType } from '../../../../src/envd/gen/filesystem/filesystem_pb.js'

function file(ino: number, changes: Partial<EntrySnapshot> = {}): EntrySnapshot {
  return {
    ino,
    mode: 0o100644,
    uid: 1000,
    gid: 1000,
    size: 4,
    mtimeMs: 1_000,
    isDirectory: false,
    ...changes,
  }
}

function dir(ino: number, changes: Partial<EntrySnapshot> = {}): EntrySnapshot {
  return file(ino, { mode: 0o040755, isDirectory: true, ...changes })
}

function seen(
  path: string,
  kinds: RawChange[],
  before: EntrySnapshot | undefined,
  after: EntrySnapshot | undefined,
  parentExists = true,
): ObservedPath {
  return { path, kinds: new Set(kinds), before, after, parentExists }
}

function types(observed: ObservedPath[]): Array<[string, string]> {
  return classifyBatch(observed).map(({ path, type }) => [path, EventType[type]])
}

describe('classifyBatch', () => {
  test('a new name is CREATE, and CREATE then WRITE when data arrived in the same batch', () => {
    expect(types([seen('/w/a', ['rename'], undefined, file(1))])).toEqual([['/w/a', 'CREATE']])
    expect(types([seen('/w/a', ['rename', 'change'], undefined, file(1))])).toEqual([
      ['/w/a', 'CREATE'],
      ['/w/a', 'WRITE'],
    ])
  })

  test('a known name that is gone is REMOVE', () => {
    expect(types([seen('/w/a', ['rename'], file(1), undefined)])).toEqual([['/w/a', 'REMOVE']])
  })

  test('a move inside the tree is RENAME of the old name and CREATE of the new one', () => {
    const moved = [
      seen('/w/old', ['rename'], file(7), undefined),
      seen('/w/sub/new', ['rename'], undefined, file(7)),
    ]
    expect(types(moved)).toEqual([
      ['/w/old', 'RENAME'],
      ['/w/sub/new', 'CREATE'],
    ])
  })

  test('a move onto an existing name replaces it without a REMOVE', () => {
    const moved = [
      seen('/w/a', ['rename'], file(1), undefined),
      seen('/w/b', ['rename'], file(2), file(1)),
    ]
    expect(types(moved)).toEqual([
      ['/w/a', 'RENAME'],
      ['/w/b', 'CREATE'],
    ])
  })

  test('a change of size or mtime is WRITE; of mode or owner is CHMOD, before WRITE', () => {
    expect(types([seen('/w/a', ['change'], file(1), file(1, { size: 9 }))])).toEqual([
      ['/w/a', 'WRITE'],
    ])
    expect(types([seen('/w/a', ['change'], file(1), file(1, { mode: 0o100600 }))])).toEqual([
      ['/w/a', 'CHMOD'],
    ])
    expect(types([seen('/w/a', ['change'], file(1), file(1, { uid: 0, mtimeMs: 5 }))])).toEqual([
      ['/w/a', 'CHMOD'],
      ['/w/a', 'WRITE'],
    ])
  })

  test('a change report without a visible difference is WRITE', () => {
    expect(types([seen('/w/a', ['change'], file(1), file(1))])).toEqual([['/w/a', 'WRITE']])
  })

  test('a rename report for an unchanged entry says nothing', () => {
    expect(types([seen('/w/a', ['rename'], file(1), file(1))])).toEqual([])
  })

  test('a directory only ever changes attributes: CHMOD, never WRITE', () => {
    expect(types([seen('/w/d', ['change'], dir(3), dir(3, { mtimeMs: 9, size: 8 }))])).toEqual([
      ['/w/d', 'CHMOD'],
    ])
  })

  test('an entry that came and went between two looks is CREATE then REMOVE', () => {
    expect(types([seen('/w/tmp', ['rename'], undefined, undefined)])).toEqual([
      ['/w/tmp', 'CREATE'],
      ['/w/tmp', 'REMOVE'],
    ])
  })

  test('a report about a watched directory itself, once it is gone, says nothing', () => {
    expect(types([seen('/w/d/d', ['rename'], undefined, undefined, false)])).toEqual([])
    expect(types([seen('/w/d/d', ['change'], undefined, undefined)])).toEqual([])
  })

  test('an upload landing over a file is WRITE and its temporary file is never reported', () => {
    const upload = [
      seen('/w/.sandbar-upload-0123', ['rename', 'change'], undefined, undefined),
      seen('/w/a', ['rename'], file(1), file(2)),
    ]
    expect(types(upload)).toEqual([['/w/a', 'WRITE']])
  })

  test('an upload creating a file is CREATE then WRITE', () => {
    const upload = [
      seen('/w/.sandbar-upload-0123', ['rename'], file(5), undefined),
      seen('/w/new', ['rename'], undefined, file(5)),
    ]
    expect(types(upload)).toEqual([
      ['/w/new', 'CREATE'],
      ['/w/new', 'WRITE'],
    ])
  })
})
