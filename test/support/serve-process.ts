import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** What `<data>/client.env` tells a client, as the SDK's options take it. */
export interface ClientEnv {
  apiUrl: string
  sandboxUrl: string
  apiKey: string
}

/** Reads the three variables `sandbar serve` writes to `<data>/client.env`. */
export function parseClientEnv(text: string): ClientEnv {
  const values = new Map<string, string>()
  for (const line of text.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) values.set(line.slice(0, at), line.slice(at + 1))
  }
  const get = (name: string) => {
    const value = values.get(name)
    if (value === undefined) throw new Error(`client.env has no ${name}`)
    return value
  }
  return {
    apiUrl: get('E2B_API_URL'),
    sandboxUrl: get('E2B_SANDBOX_URL'),
    apiKey: get('E2B_API_KEY'),
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

/** Polls a starting `sandbar serve` until its API answers `/health`, or it exits. */
export async function waitForServeHealth(
  child: ChildProcess,
  apiPort: number,
  output: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + 120_000
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
