import { connect } from 'node:net'
import * as z from 'zod/mini'
import { ENVD_CONTROL_HEADER, ENVD_PORT } from '../envd/index.js'
import { envdRequest } from './envd-request.js'

/** The URL of a sandbox's envd, from the host side. */
export function envdURL(sandboxAddress: string): string {
  return `http://${sandboxAddress}:${ENVD_PORT}`
}

/**
 * While a start is quick (envd listens ~60 ms after `run` on an idle host), `/health` is
 * polled every 5 ms and the sandbox checked for having died every 100 ms; after that, every
 * 25 ms and every second. Many sandboxes starting at once each take seconds, and every poll is
 * a connect from this process's one thread into the sandbox's network: 50 creates at once
 * spent a sixth of it polling. So each of N waits polls N times less often, up to MAX_POLL_MS
 * apart: together they poll about as often as one does.
 */
const QUICK_START_MS = 250
const POLL_MS = { quick: 5, slow: 25 }
const MAX_POLL_MS = 250
const ALIVE_CHECK_MS = { quick: 100, slow: 1_000 }

/** How many waitForEnvd calls are polling now. */
let polling = 0

/**
 * Polls envd's `/health` until it answers 204. `stillStarting` is checked now and then (see
 * ALIVE_CHECK_MS), so a container that died fails fast instead of waiting for the deadline.
 */
export async function waitForEnvd(url: string, options: EnvdWait): Promise<void> {
  polling++
  try {
    await pollHealth(url, options)
  } finally {
    polling--
  }
}

interface EnvdWait {
  timeoutMs: number
  stillStarting: () => boolean
}

async function pollHealth(url: string, options: EnvdWait): Promise<void> {
  const started = Date.now()
  const deadline = started + options.timeoutMs
  let nextAliveCheck = started + ALIVE_CHECK_MS.quick
  const target = new URL(url)
  for (;;) {
    // Most polls find the port still closed; a connect learns that for ~55 µs of this
    // thread's CPU, where a refused fetch took ~400.
    if ((await accepts(target)) && (await answersHealthy(url))) return
    const now = Date.now()
    if (now > deadline)
      throw new Error(`envd at ${url} did not answer within ${options.timeoutMs} ms`)
    const pace = now - started < QUICK_START_MS ? 'quick' : 'slow'
    if (now >= nextAliveCheck) {
      nextAliveCheck = now + ALIVE_CHECK_MS[pace]
      if (!options.stillStarting()) throw new Error(`the sandbox stopped before envd answered`)
    }
    const pause = Math.min(POLL_MS[pace] * polling, MAX_POLL_MS)
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
}

/** Whether something accepts TCP connections at `target`'s host and port. */
function accepts(target: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.hostname, port: Number(target.port) })
    socket.setTimeout(1_000, () => socket.destroy())
    socket.once('connect', () => {
      resolve(true)
      socket.destroy()
    })
    socket.once('error', () => undefined)
    socket.once('close', () => resolve(false))
  })
}

function answersHealthy(url: string): Promise<boolean> {
  return envdRequest(`${url}/health`, { timeoutMs: 1_000 }).then(
    (reply) => reply.status === 204,
    () => false,
  )
}

/** What the agent pushes to envd after boot (wire contract §3.3 `/init`). */
export interface EnvdInit {
  envVars: Record<string, string>
  accessToken?: string | undefined
  /** Unset: what envd has (a claim changes neither). */
  defaultUser?: string
  defaultWorkdir?: string
  /** A snapshot's restored envd: the sandbox ID its processes see, and its new secret. */
  sandboxID?: string
  controlSecret?: string
}

/** Pushes `/init` with the control secret of the sandbox's handover. */
export async function initEnvd(url: string, init: EnvdInit, controlSecret: string): Promise<void> {
  const reply = await envdRequest(`${url}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [ENVD_CONTROL_HEADER]: controlSecret },
    body: JSON.stringify({ ...init, timestamp: new Date().toISOString() }),
  })
  if (reply.status !== 204) {
    throw new Error(`envd /init answered ${reply.status}: ${reply.body.toString()}`)
  }
}

/**
 * Pushes `/init` with the control secret of the sandbox's handover, then checks from outside
 * that envd is locked as the handover and the push meant: `/init` without the control secret
 * is refused, and the token and env vars hold (`verifyEnvdInit`). Throws otherwise, failing
 * the create. The handover set the control lock, so its probe goes beside the push: each
 * round trip is on the create's critical path.
 */
export async function initLockedEnvd(
  url: string,
  init: EnvdInit,
  controlSecret: string,
): Promise<void> {
  await Promise.all([initEnvd(url, init, controlSecret), verifyControlLocked(url)])
  await verifyEnvdInit(url, init)
}

/**
 * Checks from outside that a `/init` took: with a token, a gated route is refused without it;
 * and the default env vars hold the ones pushed. On its own where the control lock was checked
 * when the sandbox started (a warm pool's claim): no `/init` lifts that lock.
 */
export async function verifyEnvdInit(url: string, init: EnvdInit): Promise<void> {
  const token: Record<string, string> =
    init.accessToken === undefined ? {} : { 'X-Access-Token': init.accessToken }
  const [open, envs] = await Promise.all([
    init.accessToken === undefined ? undefined : envdRequest(`${url}/envs`),
    envdRequest(`${url}/envs`, { headers: token }),
  ])
  if (open !== undefined && open.status !== 401) {
    throw new Error(`envd answered /envs without the access token (${open.status})`)
  }
  const current = envsSchema.safeParse(envs.status === 200 ? parseJson(envs.body) : undefined)
  const applied =
    current.success &&
    Object.entries(init.envVars).every(([key, value]) => current.data[key] === value)
  if (!applied) throw new Error(`envd does not hold the pushed env vars (/envs ${envs.status})`)
}

/** `/init` without the control secret must be refused. */
async function verifyControlLocked(url: string): Promise<void> {
  const { status } = await envdRequest(`${url}/init`, { method: 'POST', body: '{}' })
  if (status !== 401) throw new Error(`envd accepted /init without the control secret (${status})`)
}

/** A body as JSON, or undefined where it is none: the schema then fails it. */
function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString())
  } catch {
    return undefined
  }
}

const envsSchema = z.record(z.string(), z.string())
