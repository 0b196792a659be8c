import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Agent } from '../agent/index.js'
import { elapsedMs } from '../elapsed-ms.js'
import type { Logger } from '../logger.js'
import type { BuildResult } from '../store/index.js'
import { type BaseLayers, prepareBase } from './base/base-phase.js'
import { BuildSandbox } from './build-sandbox.js'
import type {
  BuildLogLine,
  BuildReporter,
  BuildRequest,
  BuildStep,
  TemplateFiles,
} from './index.js'
import { layerID, METADATA_LAYER_KIND } from './layer-ids.js'
import { startCommands } from './start-commands.js'
import {
  applyStep,
  type BuildContext,
  describeStep,
  E2B_METADATA_PATH,
  e2bMetadata,
  finalizeKey,
  finalizeTemplate,
  formatPhaseLine,
  stepKey,
  stepKind,
  stepLogPrefix,
} from './steps/index.js'

/** What a build runs with. */
export interface BuildTools {
  agent: Agent
  files: TemplateFiles
  /** Scratch space for image pulls, on the layer store's filesystem. */
  workDir: string
  /** Certificate authorities build steps trust (BuilderConfig.caFile's bundle). */
  caBundle?: Buffer | undefined
  logger: Logger
}

type Log = (message: string, step?: string, level?: BuildLogLine['level']) => void

/** A build failure with the phase it happened in (§1.3 `reason.step`). */
class PhaseError extends Error {
  constructor(
    message: string,
    readonly step: string,
  ) {
    super(message)
  }
}

/** Runs one phase; a failure inside it names the phase. */
async function phase<T>(step: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof PhaseError) throw error
    throw new PhaseError(error instanceof Error ? error.message : String(error), step)
  }
}

/**
 * One template build (wire contract §2.4): the base phase, one layer per step (each in a real
 * build sandbox, or `CACHED` when a layer with its key exists), the finalize phase, and a check
 * that the start command comes up. Reports progress and the outcome through `reporter`.
 */
export async function runBuild(
  request: BuildRequest,
  reporter: BuildReporter,
  tools: BuildTools,
  signal: AbortSignal,
): Promise<void> {
  const log: Log = (message, step, level = 'info') => reporter.log({ level, message, step })
  await reporter.started()
  log(`Building template ${request.templateID}/${request.buildID}`)
  try {
    const result = await build(request, tools, signal, log)
    log('Template is ready', 'finalize')
    await reporter.ready(result)
  } catch (error) {
    const message = signal.aborted
      ? String(signal.reason ?? 'The build was canceled')
      : error instanceof Error
        ? error.message
        : String(error)
    const step = error instanceof PhaseError ? error.step : undefined
    log(message, step, 'error')
    await reporter.failed({ message, ...(step === undefined ? {} : { step }) })
  }
}

/** Where a build stands between steps. */
interface BuildState {
  /** Layer IDs so far, lowest first. */
  layers: string[]
  context: BuildContext
  /**
   * The whole build reads no cache (`force`). Without it, a step's own `force` (the SDK's
   * `skipCache()` before it) rebuilds that step under a fresh ID, so every step above it has a
   * new parent and rebuilds too.
   */
  force: boolean
}

async function build(
  request: BuildRequest,
  tools: BuildTools,
  signal: AbortSignal,
  log: Log,
): Promise<BuildResult> {
  const base = await phase('base', () =>
    prepareBase(request, tools, signal, (line) => log(line, 'base')),
  )
  let state: BuildState = { layers: base.layers, context: base.context, force: request.force }
  for (const step of implicitBaseSteps(request, base)) {
    const current = state
    state = await phase('base', () =>
      runStep(step, current, 'base', 'base', request, tools, signal, log),
    )
  }
  const total = request.steps.length
  for (const [index, step] of request.steps.entries()) {
    const number = String(index + 1)
    const prefix = stepLogPrefix(index + 1, total)
    const current = state
    state = await phase(number, () =>
      runStep(step, current, prefix, number, request, tools, signal, log),
    )
  }
  const finalized = await phase('finalize', () => finalize(state, request, tools, signal, log))
  const layers = await phase('finalize', () => addMetadata(finalized, request, tools))
  const result: BuildResult = {
    ...(await phase('finalize', () => squashDeepStack(layers, tools, log))),
    ...templateDefaults(state.context),
    envVars: state.context.env,
  }
  const start = startCommands(request)
  if (start.startCmd !== undefined) {
    result.startCmd = start.startCmd
    // §2.5: with a start command and no ready command, E2B waits 20 s.
    result.readyCmd = start.readyCmd ?? 'sleep 20'
    await phase('finalize', () => checkStartCommand(result, request, tools, signal, log))
  }
  return result
}

/**
 * §2.4: from template version v2.1.0 an image base gets an implicit `USER user true` (the
 * default user, with passwordless sudo); a template base already has its users.
 */
function implicitBaseSteps(request: BuildRequest, base: BaseLayers): BuildStep[] {
  if (request.version !== 'v2.1.0' || !base.fromImage) return []
  return [{ type: 'USER', args: ['user', 'true'], force: false }]
}

/**
 * Runs one step, or takes its layer from the cache. ENV and ARG change only the context and
 * make no layer; every other step's writes become a layer keyed by what determines them.
 */
async function runStep(
  step: BuildStep,
  state: BuildState,
  prefix: string,
  number: string,
  request: BuildRequest,
  tools: BuildTools,
  signal: AbortSignal,
  log: Log,
): Promise<BuildState> {
  const parent = state.layers.at(-1) ?? ''
  const force = state.force || step.force
  const key = layerID('s', stepKey(parent, step, state.context), force)
  const announce = (cached: boolean) =>
    log(formatPhaseLine(prefix, describeStep(step), key, cached), number)
  if (stepKind(step.type) === 'ENV' || stepKind(step.type) === undefined) {
    // Nothing to build: the step only changes the context, so a rebuild has it at once.
    announce(!force && stepKind(step.type) === 'ENV')
    return { ...state, context: await applyStep(step, state.context, contextOnly) }
  }
  const cached = !force && (await tools.agent.layers.has(key))
  announce(cached)
  // The operator's view of the build (sandbar serve's log), one line per step.
  const stepText = `[${prefix}] ${describeStep(step)}`
  if (cached) {
    tools.logger.info({ step: stepText, cached: true }, 'step done')
    const context = await contextAfter(step, state.context)
    return { ...state, layers: [...state.layers, key], context }
  }
  const started = performance.now()
  const sandbox = await BuildSandbox.create(
    tools.agent,
    sandboxOptions(state, request, tools),
    signal,
  )
  const context = await sandbox.use(async () => {
    const after = await applyStep(step, state.context, {
      sandbox,
      files: { read: (hash) => tools.files.read(request.templateID, hash) },
      onOutput: (line) => log(line, number),
    })
    await sandbox.commit(key)
    return after
  })
  log(`[${prefix}] done in ${seconds(started)}`, number)
  tools.logger.info({ step: stepText, durationMs: elapsedMs(started) }, 'step done')
  return { ...state, layers: [...state.layers, key], context }
}

/** The finalize phase (§2.4): the default user, sudo, /home/user and /code, as its own layer. */
async function finalize(
  state: BuildState,
  request: BuildRequest,
  tools: BuildTools,
  signal: AbortSignal,
  log: Log,
): Promise<string[]> {
  const key = layerID('f', finalizeKey(state.layers.at(-1) ?? ''), state.force)
  const cached = !state.force && (await tools.agent.layers.has(key))
  log(formatPhaseLine('finalize', 'FINALIZE', key, cached), 'finalize')
  if (cached) return [...state.layers, key]
  const started = performance.now()
  const sandbox = await BuildSandbox.create(
    tools.agent,
    sandboxOptions(state, request, tools),
    signal,
  )
  await sandbox.use(async () => {
    await finalizeTemplate(sandbox)
    await sandbox.commit(key)
  })
  log(`[finalize] done in ${seconds(started)}`, 'finalize')
  return [...state.layers, key]
}

/**
 * Stacks deeper than this become one layer for sandboxes: every layer is one more idmapped
 * mount at each create, and an overlay's option string holds about 45 of a sandbox's layer
 * paths (host-facts § Overlay layer count). Measured (`npm run bench`, templates): 20 layers
 * cost little, so only deeper stacks are squashed.
 */
const SQUASH_ABOVE = 24

/**
 * The layers sandboxes stack: the build's own, or for a deep stack one squashed layer, with
 * the step layers kept as the next build's cache.
 */
async function squashDeepStack(
  layers: string[],
  tools: BuildTools,
  log: Log,
): Promise<Pick<BuildResult, 'layers' | 'cacheLayers'>> {
  if (layers.length <= SQUASH_ABOVE) return { layers }
  const started = performance.now()
  const id = layerID('q', sha256Hex(layers.join('\n')))
  await tools.agent.layers.squash(layers, id)
  log(
    `[finalize] ${layers.length} layers squashed into one [${id}] in ${seconds(started)}`,
    'finalize',
  )
  return { layers: [id], cacheLayers: layers }
}

/**
 * §2.4's `/.e2b` (template and build IDs) in a layer of its own above finalize: it is the one
 * thing that differs from build to build, so every layer below stays cacheable. Written
 * directly, it needs no sandbox.
 */
async function addMetadata(
  layers: string[],
  request: BuildRequest,
  tools: BuildTools,
): Promise<string[]> {
  const id = layerID(METADATA_LAYER_KIND, sha256Hex(`${request.templateID}\n${request.buildID}`))
  await tools.agent.layers.add(id, async (dir) => {
    const file = path.join(dir, E2B_METADATA_PATH)
    await writeFile(file, e2bMetadata(request), { mode: 0o644 })
  })
  return [...layers, id]
}

/**
 * §2.5: the start command must come up at build time. E2B snapshots the running process;
 * Sandbar starts it in every sandbox instead, so here it is only checked, in a sandbox made as
 * the template's sandboxes will be, and thrown away.
 */
async function checkStartCommand(
  result: BuildResult,
  request: BuildRequest,
  tools: BuildTools,
  signal: AbortSignal,
  log: Log,
): Promise<void> {
  const started = performance.now()
  log(`Running start command: ${result.startCmd}`, 'finalize')
  log(`Waiting for template to be ready: ${result.readyCmd}`, 'finalize')
  const sandbox = await BuildSandbox.create(
    tools.agent,
    {
      layers: result.layers,
      env: result.envVars,
      cpuCount: request.cpuCount,
      memoryMB: request.memoryMB,
      start: result,
    },
    signal,
  )
  await sandbox.remove()
  log(`Start command ready in ${seconds(started)}`, 'finalize')
}

/** §2.4: the last USER and WORKDIR; without a WORKDIR the user's home. */
function templateDefaults(
  context: BuildContext,
): Pick<BuildResult, 'defaultUser' | 'defaultWorkdir'> {
  const home = context.user === 'root' ? '/root' : `/home/${context.user}`
  return { defaultUser: context.user, defaultWorkdir: context.workdir ?? home }
}

function sandboxOptions(state: BuildState, request: BuildRequest, tools: BuildTools) {
  return {
    layers: state.layers,
    env: state.context.env,
    cpuCount: request.cpuCount,
    memoryMB: request.memoryMB,
    caBundle: tools.caBundle,
  }
}

/** ENV and ARG touch no sandbox: any use of one is a bug. */
const contextOnly = {
  sandbox: {
    run: () => Promise.reject(new Error('ENV steps run nothing')),
    upload: () => Promise.reject(new Error('ENV steps upload nothing')),
  },
  files: { read: () => Promise.reject(new Error('ENV steps read no files')) },
}

/**
 * The context after a step whose layer came from the cache: the step carried out against a
 * sandbox where every command succeeds and nothing happens, so the context changes exactly as
 * in the run that made the layer. RUN and COPY leave the context as it was.
 */
async function contextAfter(step: BuildStep, context: BuildContext): Promise<BuildContext> {
  const kind = stepKind(step.type)
  if (kind === 'RUN' || kind === 'COPY') return context
  return applyStep(step, context, {
    sandbox: { run: async () => 0, upload: async () => undefined },
    files: contextOnly.files,
  })
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`
}
