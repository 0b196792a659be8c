import { createHash } from 'node:crypto'
import type { BuildStep } from '../builder/index.js'
import type { Store } from '../store/index.js'
import type { TemplateBuilds } from './template-builds.js'
import { DEFAULT_TAG } from './template-names.js'
import { resolveTemplateReference } from './template-resolution.js'
import type { TemplateSizes } from './template-sizes.js'

/**
 * A template Sandbar itself provides to every team: public, owned by the first team, built
 * from this definition by the ordinary builder.
 */
export interface SystemTemplate {
  templateID: string
  sizes: TemplateSizes
  /** `image` as `fromImage`, or `template`: the ready build of another system template. */
  from: { image: string } | { template: string }
  steps: BuildStep[]
  startCmd?: string
  readyCmd?: string
}

/** The base template every team can start (§1.5 default), with E2B's base sizes. */
export const BASE_TEMPLATE: SystemTemplate = {
  templateID: 'base',
  sizes: { cpuCount: 2, memoryMB: 512, diskSizeMB: 512 },
  // The SDK's `fromBaseImage()`: Sandbar's own Debian recipe (issue 11).
  from: { image: 'e2bdev/base' },
  steps: [],
}

/**
 * Makes sure the template exists and its current definition has a ready build (`sandbar serve`
 * at start). The template is created if missing (or brought back if deleted). A build of this
 * very definition carries the tag `sandbar-<definition hash>`: with one ready, nothing is built;
 * otherwise a build runs, tagged `default` too, from layers cached where the definition is
 * unchanged. Resolves when the template can start sandboxes; rejects with the build's failure.
 */
export async function ensureSystemTemplate(
  store: Store,
  builds: TemplateBuilds,
  definition: SystemTemplate,
): Promise<void> {
  const { team } = await store.ensureFirstTeam()
  const { templateID, sizes } = definition
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
      sourceSandboxID: null,
    })
  } else if (existing.deletedAt !== null) {
    await store.updateTemplate(templateID, { deletedAt: null, updatedAt: now })
  }
  const definitionTag = `sandbar-${definitionHash(definition)}`
  const current = await store.getTag(templateID, definitionTag)
  const built = current === undefined ? undefined : await store.getBuild(current.buildID)
  if (built?.status === 'ready') {
    if ((await store.getTag(templateID, DEFAULT_TAG)) === undefined)
      await store.assignTags(templateID, [DEFAULT_TAG], built.buildID)
    return
  }
  const base =
    'image' in definition.from
      ? { kind: 'image' as const, image: definition.from.image }
      : {
          kind: 'template' as const,
          name: definition.from.template,
          build: (await resolveTemplateReference(store, team, definition.from.template)).result,
        }
  const outcome = await builds.run(team.id, templateID, sizes, base, {
    tags: [DEFAULT_TAG, definitionTag],
    steps: definition.steps,
    startCmd: definition.startCmd,
    readyCmd: definition.readyCmd,
  })
  if (outcome.status === 'error')
    throw new Error(`building the ${templateID} template failed: ${outcome.failure.message}`)
}

function definitionHash(definition: SystemTemplate): string {
  return createHash('sha256').update(JSON.stringify(definition)).digest('hex').slice(0, 12)
}
