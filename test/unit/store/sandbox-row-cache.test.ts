import type { Selectable } from 'kysely'
import { describe, expect, it } from 'vitest'
import { SandboxRowCache } from '../../../src/store/sandbox-row-cache.js'
import type { SandboxTable } from '../../../src/store/schema.js'

type Row = Selectable<SandboxTable>

/** A row that only its state tells apart; the cache never looks inside. */
function row(state: string): Row {
  return { sandbox_id: 'isandbox', state } as Row
}

/** A load that counts its calls and answers what `next` holds at the time. */
function counter(next: { row: Row | undefined }) {
  const calls = { count: 0 }
  const load = async () => {
    calls.count++
    return next.row
  }
  return { calls, load }
}

describe('SandboxRowCache', () => {
  it('loads a row once and answers it after', async () => {
    const cache = new SandboxRowCache()
    const { calls, load } = counter({ row: row('running') })
    expect(await cache.read('isandbox', load)).toEqual(row('running'))
    expect(await cache.read('isandbox', load)).toEqual(row('running'))
    expect(calls.count).toBe(1)
  })

  it('loads again after a write to the row', async () => {
    const cache = new SandboxRowCache()
    const next = { row: row('running') as Row | undefined }
    const { calls, load } = counter(next)
    await cache.read('isandbox', load)
    next.row = row('paused')
    cache.wrote('isandbox')
    expect(await cache.read('isandbox', load)).toEqual(row('paused'))
    next.row = undefined
    cache.wrote('isandbox')
    expect(await cache.read('isandbox', load)).toBeUndefined()
    expect(calls.count).toBe(3)
  })

  it('keeps no miss: an ID that is not there is asked for each time', async () => {
    const cache = new SandboxRowCache()
    const { calls, load } = counter({ row: undefined })
    await cache.read('inothere', load)
    await cache.read('inothere', load)
    expect(calls.count).toBe(2)
  })

  it('does not keep a row read while a write ended, which may be older than the write', async () => {
    const cache = new SandboxRowCache()
    let answer: (value: Row) => void = () => {}
    const stale = cache.read('isandbox', () => new Promise<Row>((resolve) => (answer = resolve)))
    // The write ends while the read waits on what it loaded before the write.
    cache.wrote('isandbox')
    answer(row('running'))
    expect(await stale).toEqual(row('running'))
    const { calls, load } = counter({ row: row('killing') })
    expect(await cache.read('isandbox', load)).toEqual(row('killing'))
    expect(calls.count).toBe(1)
  })
})
