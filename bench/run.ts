import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import { initEnvd, startNamespacedEnvd } from '../test/e2e/envd-namespace.js'
import { benchAgent } from './agent.bench.js'
import { benchExec } from './envd-exec.bench.js'
import { benchFiles } from './envd-files.bench.js'
import { benchStart } from './envd-start.bench.js'
import { benchServe } from './serve.bench.js'

const PORT = 49986

// Every figure is printed beside a floor measured in the same run, so ratios hold on a noisy
// machine. envd runs exactly as in the end-to-end tests: the built bundle, as root, in its
// own mount and PID namespaces.
const buildDir = await mkdtemp('/tmp/sbt-bench-')
try {
  execFileSync(process.execPath, ['scripts/build.mjs', buildDir], { stdio: 'inherit' })
  const bundle = path.join(buildDir, 'envd/envd.mjs')
  await benchStart(bundle)
  const envd = await startNamespacedEnvd(PORT, bundle)
  try {
    await initEnvd(envd.url)
    process.env.E2B_DEBUG = 'true'
    process.env.E2B_SANDBOX_URL = envd.url
    const { Sandbox } = await import('e2b')
    const sandbox = await Sandbox.create()
    await benchExec(sandbox)
    await benchFiles(sandbox, envd.homeOnHost)
  } finally {
    await envd.stop()
  }
  const agentDir = await mkdtemp('/tmp/sbt-bench-agent-')
  try {
    // The template cache the agent tests fill, so the bench does not build base again.
    await benchAgent({
      dataDir: agentDir,
      templatesDir: '/var/cache/sandbar-test/templates',
      envdBuildDir: buildDir,
    })
  } finally {
    await rm(agentDir, { recursive: true, force: true })
  }
  const floorDir = await mkdtemp('/tmp/sbt-bench-serve-floor-')
  try {
    // `sandbar serve` from the same bundle, beside an agent of its own for the floor.
    await benchServe({
      dataDir: floorDir,
      templatesDir: '/var/cache/sandbar-test/templates',
      envdBuildDir: buildDir,
    })
  } finally {
    await rm(floorDir, { recursive: true, force: true })
  }
} finally {
  await rm(buildDir, { recursive: true, force: true })
}
