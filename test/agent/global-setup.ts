import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    envdBuildDir: string
  }
}

/** Builds envd once for every agent test: the toolbox copies it into each agent's data dir. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const buildDir = await mkdtemp('/tmp/sbt-dist-')
  execFileSync(process.execPath, ['scripts/build.mjs', buildDir], { stdio: 'inherit' })
  project.provide('envdBuildDir', buildDir)
  return () => rm(buildDir, { recursive: true, force: true })
}
