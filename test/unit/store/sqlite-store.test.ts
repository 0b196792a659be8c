import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { describe, expect, it, vi } from 'vitest'
import { openSqlite } from '../../../src/store/sqlite-store.js'

describe('openSqlite', () => {
  it('prepares each SQL text once, and runs it with each call’s parameters', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sbt-sqlite-'))
    const { db } = openSqlite(path.join(dir, 'store.db'))
    const prepare = vi.spyOn(BetterSqlite3.prototype, 'prepare')
    try {
      const answers: unknown[] = []
      for (const n of [1, 2, 3]) answers.push((await sql`select ${n} * 2 as n`.execute(db)).rows)
      expect(answers).toEqual([[{ n: 2 }], [{ n: 4 }], [{ n: 6 }]])
      expect(prepare).toHaveBeenCalledTimes(1)
      await sql`select 'another text' as n`.execute(db)
      expect(prepare).toHaveBeenCalledTimes(2)
    } finally {
      prepare.mockRestore()
      await db.destroy()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
