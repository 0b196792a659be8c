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
 * Builds envd once for every agent test (the toolbox copies it into each agent's data dir), or
 * takes SANDBAR_TEST_BUILD_DIR's, and the Debian base layer their sandboxes start from.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('baseLayerID', await ensureTestBaseLayer(pino({ level: 'info' })))
  // The cgroup-v2 guest's bundles, built on the host before it booted.
  const prebuilt = process.env.SANDBAR_TEST_BUILD_DIR
  if (prebuilt !== undefined) {
    project.provide('envdBuildDir', prebuilt)
    return async () => {}
  }
  const buildDir = await mkdtemp('/tmp/sbt-dist-')
  execFileSync(process.execPath, ['scripts/build.mjs', buildDir], { stdio: 'inherit' })
  project.provide('envdBuildDir', buildDir)
  return () => rm(buildDir, { recursive: true, force: true })
}
