import { createHash } from 'node:crypto'
import type { BuildStep } from '../index.js'
import { stepKind } from './apply-step.js'
import type { BuildContext } from './build-context.js'
import {
  COPY_SCRIPT,
  FINALIZE_SCRIPT,
  RUN_SCRIPT,
  USER_SCRIPT,
  WORKDIR_SCRIPT,
} from './step-scripts.js'

/** Bumped when a step's meaning changes outside its script text (the TypeScript side). */
const KEY_VERSION = 'sandbar-step-v1'

/** The script each kind runs: part of the key, so a changed script builds anew. */
const SCRIPTS: Record<string, string> = {
  RUN: RUN_SCRIPT,
  COPY: COPY_SCRIPT,
  WORKDIR: WORKDIR_SCRIPT,
  USER: USER_SCRIPT,
}

/**
 * The cache key of a step's layer (sha256 hex): everything its result depends on — the parent
 * layer, the step's kind (ADD keys as COPY, ARG as ENV), args and files hash, the whole context
 * it starts from (user, workdir, env, sorted) and the script that carries it out. `force` is
 * not part of it: it decides whether the cache is read, not what the step makes.
 */
export function stepKey(parentLayerID: string, step: BuildStep, context: BuildContext): string {
  const kind = stepKind(step.type) ?? step.type.toUpperCase()
  return sha256Hex([
    KEY_VERSION,
    parentLayerID,
    kind,
    step.args,
    step.filesHash ?? null,
    context.user,
    context.workdir ?? null,
    Object.entries(context.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    SCRIPTS[kind] ?? null,
  ])
}

/** The cache key of the finalize phase's layer above `parentLayerID`. */
export function finalizeKey(parentLayerID: string): string {
  return sha256Hex([KEY_VERSION, parentLayerID, 'FINALIZE', FINALIZE_SCRIPT])
}

function sha256Hex(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex')
}
