import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { initEnvd, startNamespacedEnvd } from '../test/e2e/envd-namespace.js'
import { benchAgent } from './agent.bench.js'
import { benchExec } from './envd-exec.bench.js'
import { benchFiles } from './envd-files.bench.js'
import { benchStart } from './envd-start.bench.js'
import { benchDiskImage, benchUserFileIO } from './hardening.bench.js'
import { benchInterpreter } from './interpreter.bench.js'
import { INTERRUPTED_EXIT_CODE } from './interrupt.js'
import { describeMachine, writeResults } from './results.js'
import { benchServe } from './serve.bench.js'
import { recordReports } from './stats.js'
import { benchTemplates } from './templates.bench.js'
import { benchUser } from './user.bench.js'

const PORT = 49986
const TEMPLATES_DIR = '/var/cache/sandbar-test/templates'

// Every figure is printed beside a floor measured in the same run, so ratios hold on a noisy
// machine. Each section runs in a process of its own: after the file benches this process
// holds hundreds of MiB, and every later spawn (ip, nft, crun) and GC pause would pay for it.
// `user` comes first and is what users see; the others measure Sandbar's own parts.
const sections: Record<string, (buildDir: string) => Promise<void>> = {
  // Issue 13's table: `sandbar serve` through the official SDK, beside floors from outside.
  async user(buildDir) {
    await benchUser({ templatesDir: TEMPLATES_DIR, envdBuildDir: buildDir })
  },
  // envd runs exactly as in the end-to-end tests: the built bundle, as root, in its own mount
  // and PID namespaces.
  async envd(buildDir) {
    const bundle = path.join(buildDir, 'envd/envd.cjs')
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
      await benchUserFileIO(sandbox)
    } finally {
      await envd.stop()
    }
  },
  // What the hardening adds beside what it replaced; the seccomp profile's cost is in `agent`.
  async hardening() {
    await benchDiskImage()
  },
  async agent(buildDir) {
    const dataDir = await mkdtemp('/tmp/sbt-bench-agent-')
    try {
      // The template cache the agent tests fill, so the bench does not build base again.
      await benchAgent({ dataDir, templatesDir: TEMPLATES_DIR, envdBuildDir: buildDir })
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  },
  async serve(buildDir) {
    const dataDir = await mkdtemp('/tmp/sbt-bench-serve-floor-')
    try {
      // `sandbar serve` from the same bundle, beside an agent of its own for the floor.
      await benchServe({ dataDir, templatesDir: TEMPLATES_DIR, envdBuildDir: buildDir })
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  },
  async templates(buildDir) {
    await benchTemplates({ templatesDir: TEMPLATES_DIR, envdBuildDir: buildDir })
  },
  async interpreter(buildDir) {
    await benchInterpreter({ templatesDir: TEMPLATES_DIR, envdBuildDir: buildDir })
  },
}

const USER_SECTION = 'user'
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const [section, sectionBuildDir, linesFile] = args

if (section !== undefined && sectionBuildDir !== undefined && !(sectionBuildDir in sections)) {
  // One section in this process: `run.ts SECTION BUILD_DIR [LINES_FILE]`.
  const run = sections[section]
  if (run === undefined) throw new Error(`unknown bench section '${section}'`)
  recordReports(section, section !== USER_SECTION, linesFile)
  await run(sectionBuildDir)
} else {
  // `run.ts [SECTION...]`: those sections (all by default), then the results files.
  const names = args.length === 0 ? Object.keys(sections) : args
  for (const name of names) {
    if (!(name in sections)) throw new Error(`unknown bench section '${name}'`)
  }
  const machine = describeMachine()
  // Ctrl-C reaches the running section's process too, which removes what it made
  // (interrupt.ts) and exits: this one waits for it, then removes the build.
  process.on('SIGINT', () => undefined)
  const buildDir = await mkdtemp('/tmp/sbt-bench-')
  try {
    execFileSync(process.execPath, ['scripts/build.mjs', buildDir], { stdio: 'inherit', cwd: repo })
    const lines = path.join(buildDir, 'report-lines.jsonl')
    for (const name of names) {
      // The file benches leave dirty pages; their writeback must not land in the next timings.
      execFileSync('sync')
      // --expose-gc: the memory rows collect this process's garbage first (host-memory.ts).
      execFileSync(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', 'bench/run.ts', name, buildDir, lines],
        { stdio: 'inherit' },
      )
    }
    await writeResults(repo, lines, machine, names)
  } catch (error) {
    // An interrupted section has said so (interrupt.ts): no stack trace here.
    const status = error instanceof Error && 'status' in error ? error.status : undefined
    if (status !== INTERRUPTED_EXIT_CODE) throw error
    process.exitCode = INTERRUPTED_EXIT_CODE
  } finally {
    await rm(buildDir, { recursive: true, force: true })
  }
}
