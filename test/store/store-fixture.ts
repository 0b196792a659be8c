import { createHash, randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import type { Sandbox, SandboxQuery, Store } from '../../src/store/index.js'

/** Wire contract §1.1, written out independently of src/store/api-key.ts. */
export function contractHash(key: string): string {
  const digest = createHash('sha256')
    .update(Buffer.from(key.slice(4), 'hex'))
    .digest('base64')
  return `$sha256$${digest.replace(/=/g, '')}`
}

/** The key test stores seal tokens with. */
export const TEST_TOKEN_KEY = randomBytes(32)

export const BASE_TIME = Date.parse('2026-11-21T12:00:00.000Z')

/** A complete sandbox of `teamID`; `at` is its start time in seconds after BASE_TIME. */
export function sandbox(teamID: string, at: number, overrides: Partial<Sandbox> = {}): Sandbox {
  const startedAt = new Date(BASE_TIME + at * 1000)
  return {
    sandboxID: `i${randomBytes(10).toString('hex')}`,
    teamID,
    templateID: 'base0000000000000000',
    alias: 'base',
    state: 'running',
    startedAt,
    endAt: new Date(startedAt.getTime() + 300_000),
    maxEndAt: new Date(startedAt.getTime() + 3_600_000),
    cpuCount: 2,
    memoryMB: 512,
    diskSizeMB: 1024,
    metadata: {},
    envVars: {},
    envdAccessToken: null,
    trafficAccessToken: null,
    allowInternetAccess: null,
    network: { allowOut: [], denyOut: [], allowPublicTraffic: true },
    lifecycle: { onTimeout: 'kill', autoResume: false, keepMemory: true },
    envdVersion: '0.5.0',
    volumeMounts: [],
    buildID: null,
    ...overrides,
  }
}

/** Every page of a list, following `nextToken`; checks no page is over the limit. */
export async function allPages(store: Store, query: SandboxQuery): Promise<string[]> {
  const ids: string[] = []
  let nextToken: string | undefined
  do {
    const page = await store.listSandboxes({ ...query, nextToken })
    expect(page.sandboxes.length).toBeLessThanOrEqual(query.limit)
    ids.push(...page.sandboxes.map((s) => s.sandboxID))
    nextToken = page.nextToken
  } while (nextToken !== undefined)
  return ids
}
