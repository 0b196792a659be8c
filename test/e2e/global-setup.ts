import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { initEnvd, startNamespacedEnvd } from './envd-namespace.js'

declare module 'vitest' {
  export interface ProvidedContext {
    envdUrl: string
    envdHomeOnHost: string
    envdBundle: string
  }
}

/** The port the e2b SDK's debug mode (`E2B_DEBUG=true`) sends every sandbox call to. */
const SDK_DEBUG_PORT = 49983

/**
 * Builds the envd bundle into a private directory and runs it where the SDK's debug mode
 * looks for it. `SANDBAR_TEST_ENVD_PORT` moves it elsewhere (tests then point the SDK there
 * with `E2B_SANDBOX_URL`), so two suites can run side by side.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const buildDir = await mkdtemp('/tmp/sbt-dist-')
  execFileSync(process.execPath, ['scripts/build.mjs', buildDir], { stdio: 'inherit' })
  const bundle = path.join(buildDir, 'envd/envd.cjs')
  const port = Number(process.env.SANDBAR_TEST_ENVD_PORT ?? SDK_DEBUG_PORT)
  const envd = await startNamespacedEnvd(port, bundle).catch(async (error: unknown) => {
    await rm(buildDir, { recursive: true, force: true })
    throw error
  })
  await initEnvd(envd.url)
  project.provide('envdUrl', envd.url)
  project.provide('envdHomeOnHost', envd.homeOnHost)
  project.provide('envdBundle', bundle)
  return async () => {
    await envd.stop()
    await rm(buildDir, { recursive: true, force: true })
  }
}
