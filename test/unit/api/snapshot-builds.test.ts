import { describe, expect, it } from 'vitest'
import { unusedSnapshotBuilds } from '../../../src/api/snapshot-builds.js'
import { snapshotInfo } from '../../../src/api/snapshot-views.js'
import type { TemplateBuild, TemplateTag } from '../../../src/store/index.js'
import { build, readyBuild, result, template } from '../../store/template-fixture.js'

/** A ready snapshot build of the template, `at` seconds in. */
function snapshotBuild(templateID: string, at: number): TemplateBuild {
  return {
    ...readyBuild(templateID, at, ['x']),
    result: result(['x'], { snapshot: { sourceSandboxID: 'isource' } }),
  }
}

const tag = (name: string, { templateID, buildID }: TemplateBuild): TemplateTag => ({
  templateID,
  tag: name,
  buildID,
  createdAt: new Date(),
})

describe('unusedSnapshotBuilds', () => {
  it('picks the ready snapshot builds no tag points at that are not the newest ready', () => {
    const t = 'tmpl0000000000000000'
    const oldest = snapshotBuild(t, 1)
    const pinned = snapshotBuild(t, 2)
    const ordinary = readyBuild(t, 3, ['y'])
    const replaced = snapshotBuild(t, 4)
    const newest = snapshotBuild(t, 5)
    const failed = build(t, 6, { status: 'error' })
    const builds = [failed, newest, replaced, ordinary, pinned, oldest]
    const tags = [tag('default', newest), tag('keep', pinned)]
    expect(unusedSnapshotBuilds(builds, tags)).toEqual([replaced, oldest])
    // Untagged, the newest ready build still serves nothing by tag, yet stays (layersInUse).
    expect(unusedSnapshotBuilds([newest, replaced], [])).toEqual([replaced])
  })
})

describe('snapshotInfo', () => {
  it('names a snapshot by its team-qualified alias, or by its ID when it has none', () => {
    const named = template('team', 'my-snap', 0, { sourceSandboxID: 'isource' })
    expect(snapshotInfo({ template: named, tag: 'v2' }, 'acme')).toEqual({
      snapshotID: 'acme/my-snap:v2',
      names: ['acme/my-snap'],
    })
    const templateID = 'snap0000000000000000'
    const unnamed = template('team', templateID, 0, { templateID, sourceSandboxID: 'isource' })
    expect(snapshotInfo({ template: unnamed, tag: 'default' }, 'acme')).toEqual({
      snapshotID: `${templateID}:default`,
      names: [],
    })
  })
})
