import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * How the SDK reaches a `sandbar serve`, as its options take it: the API and the proxy by URL
 * (`E2B_API_URL`/`E2B_SANDBOX_URL`, the explicit set-up README documents beside client.env's
 * domain), and client.env's key and domain.
 */
export interface ClientEnv {
  apiUrl: string
  sandboxUrl: string
  apiKey: string
  domain: string
}

/** The variables of a client.env file, by name. */
export function clientEnvVariables(text: string): Record<string, string> {
  const values: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) values[line.slice(0, at)] = line.slice(at + 1)
  }
  return values
}

/** The SDK options for a service on `ports` whose client.env is `text`. */
export function parseClientEnv(text: string, ports: { api: number; proxy: number }): ClientEnv {
  const values = clientEnvVariables(text)
  const get = (name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`client.env has no ${name}`)
    return value
  }
  return {
    apiUrl: `http://localhost:${ports.api}`,
    sandboxUrl: `http://localhost:${ports.proxy}`,
    apiKey: get('E2B_API_KEY'),
    domain: get('E2B_DOMAIN'),
  }
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no TCP port')
  return address.port
}

/**
 * Polls a starting `sandbar serve` until its API answers `/health`, or it exits. `timeoutMs`
 * is longer for a service that builds code-interpreter-v1 before it listens.
 */
export async function waitForServeHealth(
  child: ChildProcess,
  apiPort: number,
  output: () => string = () => '',
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`sandbar serve exited early:\n${output()}`)
    }
    const answer = await fetch(`http://127.0.0.1:${apiPort}/health`).catch(() => null)
    if (answer?.status === 204) return
    await sleep(100)
  }
  throw new Error(`sandbar serve did not answer /health:\n${output()}`)
}

/**
 * A raw request to the E2B API with the team's key, for what the SDK never sends. The body is
 * JSON.parse's result, which tests read field by field.
 */
export async function callApi(client: ClientEnv, method: string, path: string, body?: unknown) {
  const answer = await fetch(`${client.apiUrl}${path}`, {
    method,
    headers: { 'X-API-Key': client.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await answer.text()
  return { status: answer.status, body: text === '' ? null : JSON.parse(text) }
}

/** The sandbox a service's JSON log line says a warm pool started, if it says so. */
export const pooledSandboxID = (line: string) => loggedSandboxID(line, 'warm pool sandbox ready')

/** The sandbox a restarted service's JSON log line says a warm pool took back, if it says so. */
export const adoptedSandboxID = (line: string) => loggedSandboxID(line, 'warm pool sandbox adopted')

/** What a service's JSON log line says of a sandbox's hibernation, if it says so. */
export function loggedHibernation(
  line: string,
): { sandboxID: string; durationMs: number; imageBytes: number } | undefined {
  const entry = loggedEntry(line, 'sandbox hibernated')
  return (
    entry && {
      sandboxID: entry.sandboxID,
      durationMs: entry.durationMs ?? Number.NaN,
      imageBytes: entry.imageBytes ?? Number.NaN,
    }
  )
}

/** What a service's JSON log line says of a snapshot of a sandbox, if it says so. */
export function loggedSnapshot(
  line: string,
): { sandboxID: string; frozenMs: number; imageBytes: number } | undefined {
  const entry = loggedEntry(line, 'sandbox snapshotted')
  return (
    entry && {
      sandboxID: entry.sandboxID,
      frozenMs: entry.frozenMs ?? Number.NaN,
      imageBytes: entry.imageBytes ?? Number.NaN,
    }
  )
}

/** A JSON log line with message `message` about a sandbox, with the figures it carries. */
function loggedEntry(
  line: string,
  message: string,
): { sandboxID: string; durationMs?: number; frozenMs?: number; imageBytes?: number } | undefined {
  if (!line.includes(message)) return undefined
  const entry = JSON.parse(line) as {
    msg?: string
    sandboxID?: string
    durationMs?: number
    frozenMs?: number
    imageBytes?: number
  }
  const { sandboxID } = entry
  return entry.msg === message && sandboxID !== undefined ? { ...entry, sandboxID } : undefined
}

function loggedSandboxID(line: string, message: string): string | undefined {
  if (!line.includes(message)) return undefined
  const entry = JSON.parse(line) as { msg?: string; sandboxID?: string }
  return entry.msg === message ? entry.sandboxID : undefined
}

/**
 * A paused sandbox's tier as the service's detail and its paused list show it (Sandbar's
 * `pausedTier` and `checkpointBytes`, which the SDK drops), read with the API key.
 */
export async function shownPausedTier(client: ClientEnv, sandboxID: string) {
  type Shown = { sandboxID: string; pausedTier?: string; checkpointBytes?: number }
  const tierOf = (sandbox: Shown | undefined) =>
    sandbox === undefined
      ? undefined
      : { pausedTier: sandbox.pausedTier, checkpointBytes: sandbox.checkpointBytes }
  const [detail, listed] = await Promise.all([
    callApi(client, 'GET', `/sandboxes/${sandboxID}`),
    callApi(client, 'GET', '/v2/sandboxes?state=paused'),
  ])
  return {
    detail: tierOf(detail.body as Shown),
    listed: tierOf((listed.body as Shown[]).find((sandbox) => sandbox.sandboxID === sandboxID)),
  }
}
