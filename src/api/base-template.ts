import type { Store } from '../store/index.js'
import type { TemplateBuilds } from './template-builds.js'
import { DEFAULT_TAG } from './template-names.js'

/** The base template every team can start (§1.5 default), with E2B's base sizes. */
export const BASE_TEMPLATE = { templateID: 'base', cpuCount: 2, memoryMB: 512, diskSizeMB: 512 }
/** What the base is built from: the SDK's `fromBaseImage()`, Sandbar's own recipe (issue 11). */
const BASE_IMAGE = 'e2bdev/base'

/**
 * Makes sure `base` exists and has a ready build (`sandbar serve` at start): the template,
 * public and owned by the first team, is created if missing (or brought back if deleted);
 * without a ready build one is built from `e2bdev/base`. Resolves when `base` can start
 * sandboxes; rejects with the build's failure.
 */
export async function ensureBaseTemplate(store: Store, builds: TemplateBuilds): Promise<void> {
  const { team } = await store.ensureFirstTeam()
  const { templateID, cpuCount, memoryMB, diskSizeMB } = BASE_TEMPLATE
  const now = new Date()
  const existing = await store.getTemplate(templateID)
  if (existing === undefined) {
    await store.insertTemplate({
      templateID,
      teamID: team.id,
      name: templateID,
      public: true,
      createdAt: now,
      updatedAt: now,
      lastSpawnedAt: null,
      spawnCount: 0,
      deletedAt: null,
    })
  } else if (existing.deletedAt !== null) {
    await store.updateTemplate(templateID, { deletedAt: null, updatedAt: now })
  }
  const ready = (await store.listBuilds(templateID)).find((build) => build.status === 'ready')
  if (ready !== undefined) {
    if ((await store.getTag(templateID, DEFAULT_TAG)) === undefined)
      await store.assignTags(templateID, [DEFAULT_TAG], ready.buildID)
    return
  }
  const outcome = await builds.run(
    team.id,
    templateID,
    { cpuCount, memoryMB, diskSizeMB },
    { kind: 'image', image: BASE_IMAGE },
  )
  if (outcome.status === 'error')
    throw new Error(`building the base template failed: ${outcome.failure.message}`)
}
