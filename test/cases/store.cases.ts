import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createStore,
  InvalidNextTokenError,
  type LogQuery,
  type Sandbox,
  type SandboxQuery,
  type Store,
  type StoreConfig,
} from '../../src/store/index.js'
import { LAST_USED_RESOLUTION_MS } from '../../src/store/team-queries.js'
import { allPages, BASE_TIME, contractHash, sandbox } from '../store/store-fixture.js'
import { runMigrationCases } from './store-migration.cases.js'
import { runTemplateStoreCases } from './template-store.cases.js'
import { runVolumeStoreCases } from './volume-store.cases.js'

/** A stored API key row, read behind the store's back to check what it wrote. */
export interface RawApiKeyRow {
  key_hash: string
  last_used_at: number | null
}

export interface StoreCaseOptions {
  name: string
  /** The config of a new, empty database. */
  newConfig(): Promise<StoreConfig>
  /** Every `api_keys` row of the database behind `config`, read without the store. */
  readApiKeys(config: StoreConfig): Promise<RawApiKeyRow[]>
  /** Runs one SQL statement on the database behind `config`, without the store. */
  sql(config: StoreConfig, text: string): Promise<unknown[]>
}

/** The Store suite, run against every backend (STYLE.md habit 3). */
export function runStoreCases({ name, newConfig, readApiKeys, sql }: StoreCaseOptions): void {
  /** A store over an empty database, and the config that opens that database again. */
  async function newStore(): Promise<{ store: Store; config: StoreConfig }> {
    const config = await newConfig()
    return { store: await createStore(config), config }
  }

  describe(`${name} store`, () => {
    const open: Store[] = []
    afterEach(async () => {
      await Promise.all(open.splice(0).map((store) => store.close()))
    })

    async function fresh(): Promise<{ store: Store; config: StoreConfig; teamID: string }> {
      const { store, config } = await newStore()
      open.push(store)
      const { team } = await store.ensureFirstTeam()
      return { store, config, teamID: team.id }
    }

    it('migrates idempotently: a second createStore on the same database keeps the data', async () => {
      const { store, config, teamID } = await fresh()
      await store.insertSandbox(sandbox(teamID, 0, { sandboxID: 'ikeep' }))
      const again = await createStore(config)
      open.push(again)
      expect(await again.ensureFirstTeam()).toMatchObject({ created: false, team: { id: teamID } })
      expect(await again.getSandbox('ikeep')).toMatchObject({ sandboxID: 'ikeep', teamID })
    })

    it('finds a team by its slug, its template namespace', async () => {
      const { store } = await fresh()
      const other = await store.createTeam('Other', 'other-team')
      expect(await store.findTeamBySlug('other-team')).toEqual(other)
      expect(await store.findTeamBySlug('nobody')).toBeUndefined()
    })

    it('refuses a sandbox of an unknown team and a second team with a taken slug', async () => {
      const { store } = await fresh()
      await expect(store.insertSandbox(sandbox('no-such-team', 0))).rejects.toThrow()
      await expect(store.createTeam('again', 'default')).rejects.toThrow()
    })

    it('creates the first team once', async () => {
      const { store } = await newStore()
      open.push(store)
      const first = await store.ensureFirstTeam()
      const second = await store.ensureFirstTeam()
      expect(first.created).toBe(true)
      expect(second).toEqual({ team: first.team, created: false })
      expect(first.team).toMatchObject({ name: 'default', slug: 'default' })
      expect(first.team.id).toMatch(/^[0-9a-f-]{36}$/)
    })

    it('finds the team by its key, stores only the contract hash, and marks the key used', async () => {
      const { store, config, teamID } = await fresh()
      const before = Date.now()
      const { apiKey, key } = await store.createApiKey(teamID, 'first')
      expect(key).toMatch(/^e2b_[0-9a-f]{40}$/)
      expect(apiKey).toMatchObject({ teamID, name: 'first', lastUsedAt: null })
      expect(apiKey.mask).toEqual({
        prefix: 'e2b_',
        valueLength: 40,
        maskedValuePrefix: key.slice(4, 6),
        maskedValueSuffix: key.slice(-4),
      })
      expect(await readApiKeys(config)).toEqual([
        { key_hash: contractHash(key), last_used_at: null },
      ])
      expect(await store.teamForApiKey(key)).toMatchObject({ id: teamID, slug: 'default' })
      const [row] = await readApiKeys(config)
      expect(row?.last_used_at).toBeGreaterThanOrEqual(before)
    })

    it('marks a key used at most once a minute, so requests do not each write', async () => {
      const { store, config, teamID } = await fresh()
      const { key } = await store.createApiKey(teamID, 'busy')
      await store.teamForApiKey(key)
      const [first] = await readApiKeys(config)
      // Long enough for a rewrite to store another millisecond.
      await sleep(5)
      await store.teamForApiKey(key)
      expect(await readApiKeys(config)).toEqual([first])
      const stale = Date.now() - LAST_USED_RESOLUTION_MS
      await sql(config, `update api_keys set last_used_at = ${stale}`)
      const before = Date.now()
      expect(await store.teamForApiKey(key)).toMatchObject({ id: teamID })
      const [row] = await readApiKeys(config)
      expect(row?.last_used_at).toBeGreaterThanOrEqual(before)
    })

    it('finds nothing for a wrong or malformed key', async () => {
      const { store, teamID } = await fresh()
      const { key } = await store.createApiKey(teamID, 'k')
      const wrong = `e2b_${randomBytes(20).toString('hex')}`
      for (const candidate of [wrong, key.toUpperCase(), key.slice(0, -1), '', 'e2b_', `${key}0`]) {
        expect(await store.teamForApiKey(candidate)).toBeUndefined()
      }
    })

    it('inserts, gets, updates and removes a sandbox with every field intact', async () => {
      const { store, teamID } = await fresh()
      const original = sandbox(teamID, 0, {
        metadata: { user: 'ann', 'odd key.$"': 'väl ue' },
        envVars: { FOO: 'bar' },
        envdAccessToken: 'envd-token',
        trafficAccessToken: 'traffic-token',
        allowInternetAccess: false,
        network: {
          allowOut: ['1.1.1.1'],
          denyOut: ['0.0.0.0/0'],
          allowPublicTraffic: false,
          maskRequestHost: 'x',
        },
        lifecycle: { onTimeout: 'pause', autoResume: true, keepMemory: false },
        buildID: '0b5e2c4e-8d5e-4f0e-9a51-3c1f1f7c2a10',
      })
      await store.insertSandbox(original)
      expect(await store.getSandbox(original.sandboxID)).toEqual(original)
      expect(await store.getSandbox(original.sandboxID, teamID)).toEqual(original)
      expect(await store.getSandbox(original.sandboxID, 'another-team')).toBeUndefined()
      await expect(store.insertSandbox(original)).rejects.toThrow()
      const other = sandbox(teamID, 1, { sandboxID: 'iother' })
      await store.insertSandbox(other)
      expect(await store.getSandboxes([original.sandboxID, 'inothere', other.sandboxID])).toEqual(
        new Map([
          [original.sandboxID, original],
          [other.sandboxID, other],
        ]),
      )
      expect(await store.getSandboxes([])).toEqual(new Map())

      const endAt = new Date(BASE_TIME + 999_000)
      const paused = await store.updateSandbox(
        original.sandboxID,
        { state: 'paused', endAt },
        'running',
      )
      expect(paused).toEqual({ ...original, state: 'paused', endAt })
      expect(await store.getSandbox(original.sandboxID)).toEqual(paused)
      // A second pause loses: the sandbox is no longer running.
      expect(
        await store.updateSandbox(original.sandboxID, { state: 'paused' }, 'running'),
      ).toBeUndefined()
      expect(await store.updateSandbox(original.sandboxID, {})).toEqual(paused)
      expect(await store.updateSandbox(original.sandboxID, {}, 'paused')).toEqual(paused)
      expect(await store.updateSandbox(original.sandboxID, {}, 'running')).toBeUndefined()
      expect(await store.updateSandbox('inothere', {})).toBeUndefined()
      expect(await store.updateSandbox('inothere', { state: 'paused' })).toBeUndefined()

      const network = { allowOut: [], denyOut: [], allowPublicTraffic: true }
      const updated = await store.updateSandbox(original.sandboxID, {
        network,
        allowInternetAccess: null,
      })
      expect(updated).toEqual({ ...paused, network, allowInternetAccess: null })

      expect(await store.removeSandbox(original.sandboxID)).toBe(true)
      expect(await store.getSandbox(original.sandboxID)).toBeUndefined()
      expect(await store.removeSandbox(original.sandboxID)).toBe(false)
      // The ID and its metadata pairs are free again.
      await store.insertSandbox(original)
      expect(await store.getSandbox(original.sandboxID)).toEqual(original)
    })

    it('keeps tokens sealed at rest, and seals those an older install left in plaintext', async () => {
      const { store, config, teamID } = await fresh()
      const tokens = { envdAccessToken: 'envd-secret', trafficAccessToken: 'traffic-secret' }
      const first = sandbox(teamID, 0, { sandboxID: 'isealed', ...tokens })
      const second = sandbox(teamID, 1, { sandboxID: 'iother', ...tokens })
      await store.insertSandbox(first)
      await store.insertSandbox(second)
      const columns = 'select envd_access_token as e, traffic_access_token as t from sandboxes'
      const raw = async (where: string) =>
        (await sql(config, `${columns} where sandbox_id = '${where}'`)) as {
          e: string
          t: string
        }[]
      const [stored] = await raw('isealed')
      expect(stored?.e).toMatch(/^sealed1\./)
      expect(stored?.t).toMatch(/^sealed1\./)
      expect(JSON.stringify(await sql(config, 'select * from sandboxes'))).not.toMatch(/secret/)

      // A value of an older install: plaintext, sealed when a store opens the database.
      await sql(
        config,
        "update sandboxes set envd_access_token = 'plain-envd' where sandbox_id = 'isealed'",
      )
      const reopened = await createStore(config)
      open.push(reopened)
      expect(await reopened.getSandbox('isealed')).toMatchObject({
        envdAccessToken: 'plain-envd',
        trafficAccessToken: 'traffic-secret',
      })
      expect((await raw('isealed'))[0]?.e).toMatch(/^sealed1\./)

      // A sealed value opens only in its own row, and only with the key.
      await sql(
        config,
        `update sandboxes set envd_access_token = '${stored?.e}' where sandbox_id = 'iother'`,
      )
      await expect(reopened.getSandbox('iother')).rejects.toThrow()
      const otherKey = await createStore({ ...config, tokenKey: randomBytes(32) })
      open.push(otherKey)
      await expect(otherKey.getSandbox('isealed')).rejects.toThrow()
    })

    it('filters lists by state, metadata pairs, template, start time and team', async () => {
      const { store, teamID } = await fresh()
      const other = (await store.createTeam('b', 'team-b')).id
      const a = sandbox(teamID, 1, { metadata: { app: 'prod', user: 'ann' } })
      const b = sandbox(teamID, 2, { metadata: { app: 'prod', user: 'bob' }, state: 'paused' })
      const c = sandbox(teamID, 3, { metadata: { app: 'dev' }, templateID: 'tpl2', alias: 'py' })
      const foreign = sandbox(other, 4, { metadata: { app: 'prod', user: 'ann' } })
      await store.insertSandbox(a)
      await store.insertSandbox(b)
      await store.insertSandbox(c)
      await store.insertSandbox(foreign)
      const ids = async (query: Omit<SandboxQuery, 'teamID' | 'limit'>) =>
        (await store.listSandboxes({ teamID, limit: 100, ...query })).sandboxes.map(
          (s) => s.sandboxID,
        )

      expect(await ids({})).toEqual([c.sandboxID, b.sandboxID, a.sandboxID])
      expect(await ids({ states: ['running'] })).toEqual([c.sandboxID, a.sandboxID])
      expect(await ids({ states: ['paused'] })).toEqual([b.sandboxID])
      expect(await ids({ states: [] })).toEqual([])
      expect(await ids({ metadata: { app: 'prod' } })).toEqual([b.sandboxID, a.sandboxID])
      expect(await ids({ metadata: { app: 'prod', user: 'ann' } })).toEqual([a.sandboxID])
      expect(await ids({ metadata: { app: 'prod', user: 'cid' } })).toEqual([])
      expect(await ids({ metadata: { app: 'prod', missing: 'x' } })).toEqual([])
      expect(await ids({ template: 'tpl2' })).toEqual([c.sandboxID])
      expect(await ids({ template: 'py' })).toEqual([c.sandboxID])
      expect(await ids({ startedAfter: b.startedAt })).toEqual([c.sandboxID, b.sandboxID])
      const theirs = await store.listSandboxes({ teamID: other, limit: 100 })
      expect(theirs.sandboxes.map((s) => s.sandboxID)).toEqual([foreign.sandboxID])
    })

    it('pages through equal start times in both orders with no duplicates and no gaps', async () => {
      const { store, teamID } = await fresh()
      // Seven sandboxes over three distinct start times.
      const all = [0, 0, 0, 5, 5, 9, 9].map((at) => sandbox(teamID, at))
      for (const s of all) await store.insertSandbox(s)
      const byID = (x: Sandbox, y: Sandbox) => (x.sandboxID < y.sandboxID ? -1 : 1)
      const desc = [...all]
        .sort(byID)
        .sort((x, y) => y.startedAt.getTime() - x.startedAt.getTime())
        .map((s) => s.sandboxID)
      const asc = [...all]
        .sort(byID)
        .sort((x, y) => x.startedAt.getTime() - y.startedAt.getTime())
        .map((s) => s.sandboxID)
      for (const limit of [1, 2, 3, 7]) {
        expect(await allPages(store, { teamID, limit })).toEqual(desc)
        expect(await allPages(store, { teamID, limit, order: 'asc' })).toEqual(asc)
      }
      const full = await store.listSandboxes({ teamID, limit: 7 })
      expect(full.nextToken).toBeUndefined()
    })

    it('refuses bad limits and foreign tokens', async () => {
      const { store, teamID } = await fresh()
      for (let at = 0; at < 3; at++) await store.insertSandbox(sandbox(teamID, at))
      for (const limit of [0, 101, -1, 1.5]) {
        await expect(store.listSandboxes({ teamID, limit })).rejects.toThrow(RangeError)
      }
      expect((await store.listSandboxes({ teamID, limit: 100 })).sandboxes).toHaveLength(3)
      const { nextToken } = await store.listSandboxes({ teamID, limit: 1 })
      expect(nextToken).toBeDefined()
      await expect(
        store.listSandboxes({ teamID, limit: 1, nextToken, order: 'asc' }),
      ).rejects.toThrow(InvalidNextTokenError)
      await expect(
        store.listSandboxes({ teamID, limit: 1, nextToken: 'garbage!' }),
      ).rejects.toThrow(InvalidNextTokenError)
    })

    it('keeps a starting sandbox out of every list, but counts it and hands it to reconcile', async () => {
      const { store, teamID } = await fresh()
      const starting = sandbox(teamID, 0, { sandboxID: 'istarting', state: 'starting' })
      const paused = sandbox(teamID, 1, { sandboxID: 'ipaused', state: 'paused' })
      await store.insertSandbox(starting)
      await store.insertSandbox(paused)
      expect((await store.listSandboxes({ teamID, limit: 100 })).sandboxes).toEqual([paused])
      expect(await store.countRunning(teamID)).toBe(1)
      expect(await store.expiredSandboxes(new Date(BASE_TIME + 3_600_000))).toEqual([])
      expect(await store.allSandboxes()).toEqual([paused, starting])
      const running = await store.updateSandbox('istarting', { state: 'running' }, 'starting')
      expect(running).toEqual({ ...starting, state: 'running' })
      expect(await store.countRunning(teamID)).toBe(1)
    })

    it('counts running sandboxes per team', async () => {
      const { store, teamID } = await fresh()
      expect(await store.countRunning(teamID)).toBe(0)
      await store.insertSandbox(sandbox(teamID, 0))
      await store.insertSandbox(sandbox(teamID, 1))
      await store.insertSandbox(sandbox(teamID, 2, { state: 'paused' }))
      await store.insertSandbox(sandbox(teamID, 4, { state: 'killing' }))
      const other = (await store.createTeam('b', 'team-b')).id
      await store.insertSandbox(sandbox(other, 3))
      expect(await store.countRunning(teamID)).toBe(2)
      expect(await store.countRunning(other)).toBe(1)
      expect(await store.countRunning('no-such-team')).toBe(0)
    })

    it('reports running sandboxes whose end has passed, soonest first', async () => {
      const { store, teamID } = await fresh()
      const now = new Date(BASE_TIME + 1_000_000)
      const late = sandbox(teamID, 0, { endAt: new Date(now.getTime() - 1) })
      const early = sandbox(teamID, 0, { endAt: new Date(now.getTime() - 5000) })
      const other = (await store.createTeam('b', 'team-b')).id
      const exact = sandbox(other, 0, { endAt: now })
      const alive = sandbox(teamID, 0, { endAt: new Date(now.getTime() + 1) })
      const paused = sandbox(teamID, 0, { state: 'paused', endAt: new Date(BASE_TIME) })
      for (const s of [late, early, exact, alive, paused]) await store.insertSandbox(s)
      const expired = await store.expiredSandboxes(now)
      expect(expired.map((s) => s.sandboxID)).toEqual([
        early.sandboxID,
        late.sandboxID,
        exact.sandboxID,
      ])
    })

    it('appends and lists logs in order, from a start, up to a limit, after removal', async () => {
      const { store, teamID } = await fresh()
      const s = sandbox(teamID, 0)
      await store.insertSandbox(s)
      const at = (ms: number) => new Date(BASE_TIME + ms)
      await store.appendLogs(teamID, s.sandboxID, [
        { timestamp: at(10), level: 'info', message: 'one', fields: { a: '1' } },
        { timestamp: at(10), level: 'warn', message: 'two', fields: {} },
      ])
      await store.appendLogs(teamID, s.sandboxID, [])
      await store.appendLogs(teamID, s.sandboxID, [
        { timestamp: at(10), level: 'error', message: 'three', fields: {} },
        { timestamp: at(5), level: 'debug', message: 'zero', fields: { b: '2' } },
        { timestamp: at(20), level: 'info', message: 'four', fields: {} },
      ])
      await store.appendLogs('another-team', s.sandboxID, [
        { timestamp: at(1), level: 'info', message: 'not yours', fields: {} },
      ])
      const messages = async (query: LogQuery) =>
        (await store.listLogs(teamID, s.sandboxID, query)).map((entry) => entry.message)

      expect(await store.listLogs(teamID, s.sandboxID, { limit: 1 })).toEqual([
        { timestamp: at(5), level: 'debug', message: 'zero', fields: { b: '2' } },
      ])
      expect(await messages({ limit: 1000 })).toEqual(['zero', 'one', 'two', 'three', 'four'])
      expect(await messages({ limit: 3 })).toEqual(['zero', 'one', 'two'])
      expect(await messages({ cursor: at(10), limit: 1000 })).toEqual([
        'one',
        'two',
        'three',
        'four',
      ])
      expect(await messages({ cursor: at(11), limit: 1000 })).toEqual(['four'])
      expect(await messages({ limit: 0 })).toEqual([])
      for (const limit of [-1, 1.5]) {
        await expect(store.listLogs(teamID, s.sandboxID, { limit })).rejects.toThrow(RangeError)
      }
      await store.removeSandbox(s.sandboxID)
      expect(await messages({ limit: 1000 })).toHaveLength(5)
      expect(await store.listLogs(teamID, 'inothere', { limit: 10 })).toEqual([])
    })

    it('lists logs backward from a cursor, from a level up, and by case-sensitive substring', async () => {
      const { store, teamID } = await fresh()
      const at = (ms: number) => new Date(BASE_TIME + ms)
      await store.appendLogs(teamID, 'ilogs', [
        { timestamp: at(1), level: 'debug', message: 'Process started 100%', fields: {} },
        { timestamp: at(2), level: 'info', message: 'process started', fields: {} },
        { timestamp: at(3), level: 'warn', message: 'port scan failed', fields: {} },
        { timestamp: at(3), level: 'error', message: 'process_ended', fields: {} },
        { timestamp: at(4), level: 'info', message: 'init', fields: {} },
      ])
      const messages = async (query: LogQuery) =>
        (await store.listLogs(teamID, 'ilogs', query)).map((entry) => entry.message)

      expect(await messages({ direction: 'backward', limit: 2 })).toEqual(['init', 'process_ended'])
      expect(await messages({ direction: 'backward', cursor: at(2), limit: 10 })).toEqual([
        'process started',
        'Process started 100%',
      ])
      expect(await messages({ direction: 'forward', cursor: at(3), limit: 10 })).toEqual([
        'port scan failed',
        'process_ended',
        'init',
      ])
      expect(await messages({ level: 'warn', limit: 10 })).toEqual([
        'port scan failed',
        'process_ended',
      ])
      expect(await messages({ level: 'debug', limit: 10 })).toHaveLength(5)
      expect(await messages({ search: 'process', limit: 10 })).toEqual([
        'process started',
        'process_ended',
      ])
      // LIKE would read these as wildcards and ignore case.
      expect(await messages({ search: 'process_', limit: 10 })).toEqual(['process_ended'])
      expect(await messages({ search: '100%', limit: 10 })).toEqual(['Process started 100%'])
      expect(await messages({ search: 'PROCESS', limit: 10 })).toEqual([])
      expect(
        await messages({ search: 'process', level: 'info', direction: 'backward', limit: 10 }),
      ).toEqual(['process_ended', 'process started'])
    })

    it('moves the output cursor together with the lines it read', async () => {
      const { store, teamID } = await fresh()
      const entry = (message: string) => ({
        timestamp: new Date(BASE_TIME),
        level: 'info' as const,
        message,
        fields: { pid: '7' },
      })
      expect(await store.outputBytesRead('iout')).toBe(0)
      await store.appendOutput(teamID, 'iout', [entry('a'), entry('b')], 120)
      expect(await store.outputBytesRead('iout')).toBe(120)
      await store.appendOutput(teamID, 'iout', [entry('c')], 180)
      expect(await store.outputBytesRead('iout')).toBe(180)
      expect(await store.outputBytesRead('iother')).toBe(0)
      const logs = await store.listLogs(teamID, 'iout', { limit: 10 })
      expect(logs.map((log) => [log.message, log.fields])).toEqual([
        ['a', { pid: '7' }],
        ['b', { pid: '7' }],
        ['c', { pid: '7' }],
      ])
      // An append that fails (a timestamp the column refuses) stores no line and keeps the cursor.
      await expect(
        store.appendOutput(
          teamID,
          'iout',
          [{ ...entry('d'), timestamp: new Date(Number.NaN) }],
          999,
        ),
      ).rejects.toThrow()
      expect(await store.outputBytesRead('iout')).toBe(180)
      expect(await store.listLogs(teamID, 'iout', { limit: 10 })).toHaveLength(3)
    })

    it('prunes log entries and samples older than a cutoff, and nothing newer', async () => {
      const { store, teamID } = await fresh()
      const at = (ms: number) => new Date(BASE_TIME + ms)
      const entry = (ms: number) => ({
        timestamp: at(ms),
        level: 'info' as const,
        message: `${ms}`,
        fields: {},
      })
      const sample = (ms: number) => ({
        timestamp: at(ms),
        ...{
          cpuCount: 1,
          cpuUsedPct: 0,
          memUsed: 1,
          memTotal: 2,
          memCache: 0,
          diskUsed: 1,
          diskTotal: 2,
        },
      })
      await store.appendLogs(teamID, 'iold', [entry(1), entry(2), entry(3)])
      await store.appendMetrics(
        [1000, 2000, 3000].map((ms) => ({ teamID, sandboxID: 'iold', sample: sample(ms) })),
      )

      expect(await store.pruneTelemetry(at(2000))).toEqual({ logs: 3, metrics: 1 })
      expect(await store.listLogs(teamID, 'iold', { limit: 10 })).toEqual([])
      expect((await store.listMetrics(teamID, 'iold', {})).map((s) => s.timestamp)).toEqual([
        at(2000),
        at(3000),
      ])
      expect(await store.pruneTelemetry(at(2000))).toEqual({ logs: 0, metrics: 0 })
    })

    it('keeps a metrics series per sandbox and finds the newest sample of each', async () => {
      const { store, teamID } = await fresh()
      const sample = (second: number, cpuUsedPct: number) => ({
        timestamp: new Date(BASE_TIME + second * 1000),
        cpuCount: 2,
        cpuUsedPct,
        memUsed: 100 * 2 ** 20,
        memTotal: 512 * 2 ** 20,
        memCache: 3 * 2 ** 20,
        diskUsed: 2 ** 30,
        diskTotal: 10 * 2 ** 30,
      })
      await store.appendMetrics([])
      await store.appendMetrics([
        { teamID, sandboxID: 'ia', sample: sample(10, 1.5) },
        { teamID, sandboxID: 'ia', sample: sample(5, 0.25) },
        { teamID, sandboxID: 'ib', sample: sample(7, 12) },
        { teamID: 'another-team', sandboxID: 'ia', sample: sample(20, 50) },
      ])
      await store.appendMetrics([{ teamID, sandboxID: 'ia', sample: sample(15, 99.75) }])
      // More than one statement's worth of bound parameters, in one call.
      const many = Array.from({ length: 3_500 }, (_, i) => ({
        teamID,
        sandboxID: 'imany',
        sample: sample(i, 1),
      }))
      await store.appendMetrics(many)
      expect(await store.listMetrics(teamID, 'imany', {})).toHaveLength(many.length)

      expect(await store.listMetrics(teamID, 'ia', {})).toEqual([
        sample(5, 0.25),
        sample(10, 1.5),
        sample(15, 99.75),
      ])
      const range = { start: new Date(BASE_TIME + 6000), end: new Date(BASE_TIME + 15000) }
      expect(await store.listMetrics(teamID, 'ia', range)).toEqual([
        sample(10, 1.5),
        sample(15, 99.75),
      ])
      expect(await store.listMetrics(teamID, 'inone', {})).toEqual([])

      const latest = await store.latestMetrics(teamID, ['ia', 'ib', 'inone'])
      expect(Object.fromEntries(latest)).toEqual({ ia: sample(15, 99.75), ib: sample(7, 12) })
      expect((await store.latestMetrics(teamID, [])).size).toBe(0)
    })

    runTemplateStoreCases(newConfig)
    runVolumeStoreCases(newConfig)
    runMigrationCases(newConfig)
  })
}
