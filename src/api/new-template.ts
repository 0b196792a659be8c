import type { Template } from '../store/index.js'
import { newTemplateID } from './sandbox-ids.js'

/**
 * A new private template of the team, never spawned: a build's (named by its alias) or a
 * snapshot's (`sourceSandboxID`; unnamed, its name is its own ID).
 */
export function newTemplate(
  teamID: string,
  name: string | undefined,
  sourceSandboxID: string | null = null,
): Template {
  const now = new Date()
  const templateID = newTemplateID()
  return {
    templateID,
    teamID,
    name: name ?? templateID,
    public: false,
    createdAt: now,
    updatedAt: now,
    lastSpawnedAt: null,
    spawnCount: 0,
    deletedAt: null,
    sourceSandboxID,
  }
}
