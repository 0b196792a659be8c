import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { pino } from 'pino'
import type { TestProject } from 'vitest/node'
import { ensureTestBaseLayer } from './base-layer.js'

declare module 'vitest' {
  export interface ProvidedContext {
    envdBuildDir: string
    /** The Debian base layer's ID in TEMPLATE_CACHE (base-layer.ts). */
    baseLayerID: string
  }
}

/**
 * Builds envd once for every agent test (the toolbox copies it into each agent's data dir), and
 * the Debian base layer their sandboxes start from.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const buildDir = await mkdtemp('/tmp/sbt-dist-')
  execFileSync(process.execPath, ['scripts/build.mjs', buildDir], { stdio: 'inherit' })
  project.provide('envdBuildDir', buildDir)
  project.provide('baseLayerID', await ensureTestBaseLayer(pino({ level: 'info' })))
  return () => rm(buildDir, { recursive: true, force: true })
}
