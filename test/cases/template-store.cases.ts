import { describe, expect, it } from 'vitest'
import type {
  BuildLogEntry,
  BuildLogQuery,
  SnapshotQuery,
  StoreConfig,
} from '../../src/store/index.js'
import { BASE_TIME } from '../store/store-fixture.js'
import { build, readyBuild, result, template } from '../store/template-fixture.js'
import { twoTeamStores } from './two-team-store.js'

/** The TemplateStore part of the Store suite (runStoreCases), on every backend. */
export function runTemplateStoreCases(newConfig: () => Promise<StoreConfig>): void {
  describe('templates', () => {
    const fresh = twoTeamStores(newConfig)

    const at = (ms: number) => new Date(BASE_TIME + ms)

    it('stores a template with every field, finds it by ID and live name, lists the live ones newest first', async () => {
      const { store, teamID, otherTeamID } = await fresh()
      const older = template(teamID, 'py', 1, {
        public: true,
        lastSpawnedAt: at(5000),
        spawnCount: 3,
        sourceSandboxID: 'isource',
      })
      const newer = template(teamID, 'node', 2)
      const theirs = template(otherTeamID, 'py', 3)
      for (const t of [older, newer, theirs]) await store.insertTemplate(t)

      expect(await store.getTemplate(older.templateID)).toEqual(older)
      expect(await store.findTemplate(teamID, 'py')).toEqual(older)
      expect(await store.findTemplate(otherTeamID, 'py')).toEqual(theirs)
      expect(await store.findTemplate(otherTeamID, 'node')).toBeUndefined()
      expect(await store.findTemplate(teamID, 'PY')).toBeUndefined()
      expect(await store.getTemplate('nothere')).toBeUndefined()
      expect(await store.listTemplates(teamID)).toEqual([newer, older])
      expect(await store.listTemplates(otherTeamID)).toEqual([theirs])
      expect(await store.listTemplates('no-such-team')).toEqual([])

      await expect(store.insertTemplate(older)).rejects.toThrow()
      await expect(store.insertTemplate(template(teamID, 'py', 4))).rejects.toThrow()
      await expect(store.insertTemplate(template('no-such-team', 'x', 4))).rejects.toThrow()
      expect(await store.listTemplates(teamID)).toEqual([newer, older])
    })

    it('frees the name of a deleted template, which stays readable by ID', async () => {
      const { store, teamID } = await fresh()
      const first = template(teamID, 'py', 1)
      await store.insertTemplate(first)
      const deletedAt = at(10_000)
      const deleted = await store.updateTemplate(first.templateID, {
        deletedAt,
        updatedAt: deletedAt,
      })
      expect(deleted).toEqual({ ...first, deletedAt, updatedAt: deletedAt })
      expect(await store.getTemplate(first.templateID)).toEqual(deleted)
      expect(await store.findTemplate(teamID, 'py')).toBeUndefined()
      expect(await store.listTemplates(teamID)).toEqual([])

      const second = template(teamID, 'py', 20)
      await store.insertTemplate(second)
      expect(await store.findTemplate(teamID, 'py')).toEqual(second)
      expect(await store.listTemplates(teamID)).toEqual([second])
      // Two deleted templates may share a name; two live ones may not.
      await store.updateTemplate(second.templateID, { deletedAt: at(30_000) })
      const third = template(teamID, 'py', 40)
      await store.insertTemplate(third)
      await expect(store.updateTemplate(first.templateID, { deletedAt: null })).rejects.toThrow()
      expect(await store.getTemplate(first.templateID)).toEqual(deleted)
    })

    it('updates a template field by field and counts its spawns', async () => {
      const { store, teamID } = await fresh()
      const original = template(teamID, 'py', 1)
      const other = template(teamID, 'node', 2)
      await store.insertTemplate(original)
      await store.insertTemplate(other)

      const published = await store.updateTemplate(original.templateID, {
        public: true,
        updatedAt: at(3000),
      })
      expect(published).toEqual({ ...original, public: true, updatedAt: at(3000) })
      expect(await store.updateTemplate(original.templateID, {})).toEqual(published)
      expect(await store.updateTemplate('nothere', { public: true })).toBeUndefined()
      expect(await store.updateTemplate('nothere', {})).toBeUndefined()

      await store.recordSpawn(original.templateID, at(4000))
      await Promise.all([
        store.recordSpawn(original.templateID, at(5000)),
        store.recordSpawn(original.templateID, at(5000)),
      ])
      await store.recordSpawn('nothere', at(5000))
      expect(await store.getTemplate(original.templateID)).toEqual({
        ...published,
        spawnCount: 3,
        lastSpawnedAt: at(5000),
      })
      expect(await store.getTemplate(other.templateID)).toEqual(other)
    })

    it('stores builds with every field, lists them newest first, only for a known template', async () => {
      const { store, teamID } = await fresh()
      const t = template(teamID, 'py', 0)
      const u = template(teamID, 'node', 0)
      await store.insertTemplate(t)
      await store.insertTemplate(u)
      const first = readyBuild(t.templateID, 1, ['l1', 'l2'])
      first.result = result(['l1', 'l2'], {
        envVars: { PATH: '/usr/bin', 'odd key': 'väl"ue' },
        startCmd: 'python -m http.server',
        readyCmd: 'curl -f localhost:8000',
      })
      const second = build(t.templateID, 2, { tags: ['v2', 'latest'], cpuCount: 4 })
      const failed = build(t.templateID, 3, {
        status: 'error',
        tags: [],
        failure: { message: 'RUN exited 1', step: '2' },
        finishedAt: at(3500),
      })
      const theirs = build(u.templateID, 4)
      for (const b of [first, second, failed, theirs]) await store.insertBuild(b)

      expect(await store.getBuild(first.buildID)).toEqual(first)
      expect(await store.getBuild(failed.buildID)).toEqual(failed)
      expect(await store.getBuild('nothere')).toBeUndefined()
      expect(await store.listBuilds(t.templateID)).toEqual([failed, second, first])
      expect(await store.listBuilds(u.templateID)).toEqual([theirs])
      expect(await store.listBuilds('nothere')).toEqual([])
      await expect(store.insertBuild(first)).rejects.toThrow()
      await expect(store.insertBuild(build('nothere', 5))).rejects.toThrow()
    })

    it('updates a build only while it is in one of the given states', async () => {
      const { store, teamID } = await fresh()
      const t = template(teamID, 'py', 0)
      await store.insertTemplate(t)
      const waiting = build(t.templateID, 1)
      await store.insertBuild(waiting)

      const building = await store.updateBuild(
        waiting.buildID,
        { status: 'building', updatedAt: at(2000) },
        ['waiting'],
      )
      expect(building).toEqual({ ...waiting, status: 'building', updatedAt: at(2000) })
      // A second start loses: the build is no longer waiting.
      expect(
        await store.updateBuild(waiting.buildID, { status: 'building' }, ['waiting']),
      ).toBeUndefined()
      const ready = await store.updateBuild(
        waiting.buildID,
        {
          status: 'ready',
          updatedAt: at(3000),
          finishedAt: at(3000),
          envdVersion: '0.5.0',
          result: result(['l1']),
        },
        ['waiting', 'building'],
      )
      expect(ready).toEqual({
        ...waiting,
        status: 'ready',
        updatedAt: at(3000),
        finishedAt: at(3000),
        envdVersion: '0.5.0',
        result: result(['l1']),
      })
      // A late failure (say, a cancel racing the end) does not overwrite the ready build.
      const failure = { message: 'cancelled' }
      expect(
        await store.updateBuild(waiting.buildID, { status: 'error', failure }, [
          'waiting',
          'building',
        ]),
      ).toBeUndefined()
      expect(await store.getBuild(waiting.buildID)).toEqual(ready)

      expect(await store.updateBuild(waiting.buildID, {}, ['ready'])).toEqual(ready)
      expect(await store.updateBuild(waiting.buildID, {})).toEqual(ready)
      expect(await store.updateBuild(waiting.buildID, {}, ['error'])).toBeUndefined()
      expect(await store.updateBuild(waiting.buildID, { status: 'error' }, [])).toBeUndefined()
      expect(await store.updateBuild('nothere', { status: 'error' })).toBeUndefined()
      expect(await store.updateBuild('nothere', {})).toBeUndefined()

      const failed = await store.updateBuild(waiting.buildID, {
        status: 'error',
        failure,
        result: null,
        finishedAt: null,
      })
      expect(failed).toEqual({ ...ready, status: 'error', failure, result: null, finishedAt: null })
      expect(await store.getBuild(waiting.buildID)).toEqual(failed)
    })

    it('finds the unfinished builds of every template, deleted ones included, oldest first', async () => {
      const { store, teamID, otherTeamID } = await fresh()
      const t = template(teamID, 'py', 0)
      const gone = template(teamID, 'gone', 0, { deletedAt: at(1) })
      const theirs = template(otherTeamID, 'py', 0)
      for (const x of [t, gone, theirs]) await store.insertTemplate(x)
      const waiting = build(t.templateID, 4)
      const building = build(gone.templateID, 2, { status: 'building' })
      const foreign = build(theirs.templateID, 3, { status: 'building' })
      const done = readyBuild(t.templateID, 1, ['l1'])
      const failed = build(theirs.templateID, 5, { status: 'error', failure: { message: 'x' } })
      for (const b of [waiting, building, foreign, done, failed]) await store.insertBuild(b)

      expect(await store.unfinishedBuilds()).toEqual([building, foreign, waiting])
    })

    it('points tags at builds of their own template and moves them on reassignment', async () => {
      const { store, teamID } = await fresh()
      const t = template(teamID, 'py', 0)
      const u = template(teamID, 'node', 0)
      await store.insertTemplate(t)
      await store.insertTemplate(u)
      const first = readyBuild(t.templateID, 1, ['l1'])
      const second = readyBuild(t.templateID, 2, ['l2'])
      const theirs = readyBuild(u.templateID, 3, ['l3'])
      for (const b of [first, second, theirs]) await store.insertBuild(b)
      const tagsOf = async (templateID: string) =>
        (await store.listTags(templateID)).map(({ tag, buildID }) => [tag, buildID])

      const before = Date.now()
      await store.assignTags(t.templateID, ['v1', 'latest', 'v1'], first.buildID)
      const after = Date.now()
      await store.assignTags(u.templateID, ['latest'], theirs.buildID)
      await store.assignTags(t.templateID, [], second.buildID)
      expect(await tagsOf(t.templateID)).toEqual([
        ['latest', first.buildID],
        ['v1', first.buildID],
      ])
      const v1 = await store.getTag(t.templateID, 'v1')
      expect(v1).toMatchObject({ templateID: t.templateID, tag: 'v1', buildID: first.buildID })
      expect(v1?.createdAt.getTime()).toBeGreaterThanOrEqual(before)
      expect(v1?.createdAt.getTime()).toBeLessThanOrEqual(after)

      await store.assignTags(t.templateID, ['latest', 'v2'], second.buildID)
      expect(await tagsOf(t.templateID)).toEqual([
        ['latest', second.buildID],
        ['v1', first.buildID],
        ['v2', second.buildID],
      ])
      expect(await tagsOf(u.templateID)).toEqual([['latest', theirs.buildID]])

      // A build of another template: refused, and no tag moves.
      await expect(store.assignTags(t.templateID, ['v1', 'v3'], theirs.buildID)).rejects.toThrow()
      await expect(store.assignTags(t.templateID, ['v3'], 'nothere')).rejects.toThrow()
      expect(await store.getTag(t.templateID, 'v1')).toEqual(v1)
      expect(await store.getTag(t.templateID, 'v3')).toBeUndefined()

      expect(await store.removeTags(t.templateID, ['v1', 'missing', 'v2'])).toEqual(['v1', 'v2'])
      expect(await store.removeTags(t.templateID, ['v1'])).toEqual([])
      expect(await store.removeTags(t.templateID, [])).toEqual([])
      expect(await tagsOf(t.templateID)).toEqual([['latest', second.buildID]])
      expect(await store.getTag(t.templateID, 'v1')).toBeUndefined()
      expect(await tagsOf(u.templateID)).toEqual([['latest', theirs.buildID]])
      expect(await store.listTags('nothere')).toEqual([])
    })

    it('keeps the layers of tagged and newest ready builds of live templates in use', async () => {
      const { store, teamID } = await fresh()
      const a = template(teamID, 'a', 0)
      const b = template(teamID, 'b', 0)
      const gone = template(teamID, 'gone', 0)
      const unbuilt = template(teamID, 'fresh', 0)
      for (const t of [a, b, gone, unbuilt]) await store.insertTemplate(t)
      // a: an old untagged build, the newest ready one, and newer unfinished or failed ones.
      const aOld = readyBuild(a.templateID, 1, ['base', 'a-old'])
      const aNew = readyBuild(a.templateID, 2, ['base', 'a-new'])
      const aFailed = build(a.templateID, 3, { status: 'error', failure: { message: 'x' } })
      const aBuilding = build(a.templateID, 4, { status: 'building' })
      // b: a tagged old build and an untagged newest one, both kept.
      const bOld = readyBuild(b.templateID, 1, ['b-old'])
      const bNew = readyBuild(b.templateID, 2, ['b-new'])
      // gone: tagged and newest, but its template is deleted.
      const goneBuild = readyBuild(gone.templateID, 1, ['gone'])
      // fresh: nothing ready yet.
      const waiting = build(unbuilt.templateID, 1)
      const all = [aOld, aNew, aFailed, aBuilding, bOld, bNew, goneBuild, waiting]
      for (const x of all) await store.insertBuild(x)
      await store.assignTags(b.templateID, ['stable'], bOld.buildID)
      await store.assignTags(gone.templateID, ['default'], goneBuild.buildID)
      await store.updateTemplate(gone.templateID, { deletedAt: at(9000) })
      const inUse = async () => [...(await store.layersInUse())].sort()

      expect(await inUse()).toEqual(['a-new', 'b-new', 'b-old', 'base'])
      // Replacing the tag releases the old build's layers.
      await store.assignTags(b.templateID, ['stable'], bNew.buildID)
      expect(await inUse()).toEqual(['a-new', 'b-new', 'base'])
      // Tagging the old build of a keeps it.
      await store.assignTags(a.templateID, ['pinned'], aOld.buildID)
      expect(await inUse()).toEqual(['a-new', 'a-old', 'b-new', 'base'])
      // A newer ready build takes over from the previous newest; a squashed one keeps the step
      // layers it was made from, the cache of the next build.
      await store.updateBuild(aBuilding.buildID, {
        status: 'ready',
        result: { ...result(['a-4']), cacheLayers: ['a-4-step-1', 'a-4-step-2'] },
      })
      expect(await inUse()).toEqual(['a-4', 'a-4-step-1', 'a-4-step-2', 'a-old', 'b-new', 'base'])
      // Deleting the template releases everything of it.
      await store.updateTemplate(a.templateID, { deletedAt: at(10_000) })
      expect(await inUse()).toEqual(['b-new'])
    })

    it('lists live snapshot templates with a tagged ready build, newest first, each by its newest tag', async () => {
      const { store, teamID, otherTeamID } = await fresh()
      const snap = (team: string, name: string, at: number, source: string) =>
        template(team, name, at, { sourceSandboxID: source })
      const first = snap(teamID, 'first', 1, 'ia')
      const second = snap(teamID, 'second', 2, 'ib')
      const failed = snap(teamID, 'failed', 3, 'ia')
      const gone = snap(teamID, 'gone', 4, 'ia')
      const ordinary = template(teamID, 'ordinary', 5)
      const theirs = snap(otherTeamID, 'theirs', 6, 'ia')
      const all = [first, second, failed, gone, ordinary, theirs]
      for (const t of all) await store.insertTemplate(t)
      const ready = (t: { templateID: string }, at: number) => readyBuild(t.templateID, at, ['x'])
      const builds = Object.fromEntries(all.map((t, index) => [t.name, ready(t, index)]))
      const secondV2 = ready(second, 7)
      for (const b of [...Object.values(builds), secondV2]) await store.insertBuild(b)
      for (const t of all) {
        if (t !== failed)
          await store.assignTags(t.templateID, ['default'], builds[t.name]?.buildID ?? '')
      }
      await store.assignTags(second.templateID, ['v2'], secondV2.buildID)
      await store.updateBuild(builds.failed?.buildID ?? '', { status: 'error' })
      await store.assignTags(failed.templateID, ['default'], builds.failed?.buildID ?? '')
      await store.updateTemplate(gone.templateID, { deletedAt: at(9000) })
      const listed = async (query: Omit<SnapshotQuery, 'teamID'> = {}) =>
        (await store.listSnapshots({ teamID, ...query })).map(
          ({ template: t, tag }) => `${t.name}:${tag}`,
        )

      expect(await listed()).toEqual(['second:v2', 'first:default'])
      expect((await store.listSnapshots({ teamID }))[1]?.template).toEqual(first)
      expect(await listed({ sourceSandboxID: 'ia' })).toEqual(['first:default'])
      expect(await listed({ templateID: second.templateID })).toEqual(['second:v2'])
      expect(await listed({ templateID: second.templateID, tag: 'default' })).toEqual([
        'second:default',
      ])
      expect(await listed({ tag: 'v9' })).toEqual([])
      expect(await store.listSnapshots({ teamID: otherTeamID })).toEqual([
        { template: theirs, tag: 'default' },
      ])
    })

    it('takes the greater build ID as the newest of ready builds made in the same millisecond', async () => {
      const { store, teamID } = await fresh()
      const t = template(teamID, 'py', 0)
      await store.insertTemplate(t)
      const one = readyBuild(t.templateID, 1, ['one'])
      const two = readyBuild(t.templateID, 1, ['two'])
      await store.insertBuild(one)
      await store.insertBuild(two)
      const [newest] = await store.listBuilds(t.templateID)
      expect(newest?.result?.layers).toBeDefined()
      expect([...(await store.layersInUse())]).toEqual(newest?.result?.layers)
    })

    it('pages build logs by position among the entries at or above a level', async () => {
      const { store, teamID } = await fresh()
      const t = template(teamID, 'py', 0)
      await store.insertTemplate(t)
      const mine = build(t.templateID, 1)
      const other = build(t.templateID, 2)
      await store.insertBuild(mine)
      await store.insertBuild(other)
      const entry = (
        ms: number,
        level: BuildLogEntry['level'],
        message: string,
        step?: string,
      ): BuildLogEntry => ({ timestamp: at(ms), level, message, step })
      // Appended out of timestamp order: position is the order of appending.
      const entries = [
        entry(5, 'info', 'pulling', 'base'),
        entry(5, 'debug', 'layer sha256:1', 'base'),
        entry(3, 'warn', 'no platform match', 'base'),
        entry(7, 'info', 'RUN apt-get update', '1'),
        entry(7, 'error', 'exit 100', '1'),
        entry(8, 'info', 'build failed'),
      ]
      await store.appendBuildLogs(mine.buildID, entries.slice(0, 3))
      await store.appendBuildLogs(other.buildID, [entry(1, 'error', 'not mine')])
      await store.appendBuildLogs(mine.buildID, [])
      await store.appendBuildLogs(mine.buildID, entries.slice(3))
      const messages = async (query: BuildLogQuery) =>
        (await store.listBuildLogs(mine.buildID, query)).map((e) => e.message)

      expect(await store.listBuildLogs(mine.buildID, { offset: 0, limit: 100 })).toEqual(entries)
      expect(await messages({ offset: 2, limit: 2 })).toEqual([
        'no platform match',
        'RUN apt-get update',
      ])
      expect(await messages({ offset: 0, limit: 100, level: 'warn' })).toEqual([
        'no platform match',
        'exit 100',
      ])
      // The offset counts filtered entries: the debug line takes no position at info.
      expect(await messages({ offset: 1, limit: 2, level: 'info' })).toEqual([
        'no platform match',
        'RUN apt-get update',
      ])
      expect(await messages({ offset: 4, limit: 100, level: 'info' })).toEqual(['build failed'])
      expect(await messages({ offset: 5, limit: 100, level: 'info' })).toEqual([])
      expect(await messages({ offset: 0, limit: 100, level: 'error' })).toEqual(['exit 100'])
      expect(await messages({ offset: 0, limit: 100, level: 'debug' })).toHaveLength(6)
      expect(await messages({ offset: 0, limit: 0 })).toEqual([])
      expect(await store.listBuildLogs('nothere', { offset: 0, limit: 10 })).toEqual([])
      for (const bad of [
        { offset: -1, limit: 10 },
        { offset: 0, limit: -1 },
        { offset: 0.5, limit: 10 },
        { offset: 0, limit: 1.5 },
      ]) {
        await expect(store.listBuildLogs(mine.buildID, bad)).rejects.toThrow(RangeError)
      }
    })
  })
}
