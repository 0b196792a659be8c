import {
  RateLimitError,
  Sandbox,
  SandboxError,
  type SandboxOpts,
  Secret,
  SecretError,
  SecretNotFoundError,
} from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// What Sandbar lacks, refused in words the SDK passes on (wire contract §1.2, §1.3, 2.51
// addendum; wave2-contracts §2, §3): the contract's routes it does not serve answer 501 naming
// the feature, fields it cannot honour answer 400 naming the field, and the concurrency limit
// is this host's. The service allows two sandboxes at once; one serves the whole file.

let serve: ServeInstance
let sandbox: Sandbox
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe(['--max-sandboxes', '2'])
  sandbox = await Sandbox.create(opts())
})

afterAll(async () => {
  if (sandbox !== undefined) await Sandbox.kill(sandbox.sandboxId, opts())
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

/** The error an SDK call rejects with; fails the test if it resolves. */
async function rejection(call: Promise<unknown>): Promise<Error> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${String(outcome.value)}`)
  if (!(outcome.error instanceof Error)) throw outcome.error
  return outcome.error
}

const NOT_YET = 'not supported by this Sandbar server yet: '

describe('routes Sandbar lacks answer 501 naming the feature', () => {
  it('secrets, as SecretError rather than "not found"', async () => {
    const created = await rejection(Secret.create('openai-key', 'sk-secret', opts()))
    expect(created).toBeInstanceOf(SecretError)
    expect(created.message).toBe(
      '501: Secrets are not supported by this Sandbar server yet: it cannot keep values for sandboxes to use. Pass them to the sandbox as environment variables (envs) instead.',
    )
    const exists = await rejection(Secret.exists('openai-key', opts()))
    expect(exists).toBeInstanceOf(SecretError)
    expect(exists).not.toBeInstanceOf(SecretNotFoundError)
  })

  it('every other such route of the contract, with the method it gives', async () => {
    const routes: [method: string, path: string, feature: string][] = [
      ['GET', '/secrets', 'Secrets are'],
      ['POST', '/secrets', 'Secrets are'],
      ['GET', '/secrets/sec_1', 'Secrets are'],
      ['POST', '/secrets/sec_1', 'Secrets are'],
      ['DELETE', '/secrets/sec_1', 'Secrets are'],
      ['POST', '/templates', 'Legacy template builds are'],
      ['POST', '/templates/t1', 'Legacy template builds are'],
      ['POST', '/templates/t1/builds/b1', 'Legacy template builds are'],
      ['GET', '/teams', 'Listing teams is'],
      ['GET', '/teams/team1/metrics', 'Team metrics are'],
      ['GET', '/teams/team1/metrics/max?metric=concurrent_sandboxes', 'Team metrics are'],
      ['POST', '/access-tokens', 'Managing API keys and access tokens is'],
      ['DELETE', '/access-tokens/a1', 'Managing API keys and access tokens is'],
      ['GET', '/api-keys', 'Managing API keys and access tokens is'],
      ['POST', '/api-keys', 'Managing API keys and access tokens is'],
      ['PATCH', '/api-keys/k1', 'Managing API keys and access tokens is'],
      ['DELETE', '/api-keys/k1', 'Managing API keys and access tokens is'],
      ['GET', '/nodes', 'Cluster nodes are'],
      ['GET', '/nodes/n1', 'Cluster nodes are'],
      ['POST', '/nodes/n1', 'Cluster nodes are'],
      ['POST', '/admin/teams/team1/sandboxes/kill', 'The admin API is'],
      ['GET', '/admin/sandboxes/running-counts', 'The admin API is'],
      ['POST', '/admin/teams/team1/builds/cancel', 'The admin API is'],
      ['POST', '/admin/teams/team1/api-keys', 'The admin API is'],
      ['DELETE', '/admin/teams/team1/api-keys/k1', 'The admin API is'],
      ['GET', '/events/sandboxes', 'Sandbox lifecycle events are'],
      ['GET', `/events/sandboxes/${sandbox.sandboxId}`, 'Sandbox lifecycle events are'],
      ['GET', '/events/webhooks', 'Lifecycle webhooks are'],
      ['POST', '/events/webhooks', 'Lifecycle webhooks are'],
      ['GET', '/events/webhooks/w1', 'Lifecycle webhooks are'],
      ['PATCH', '/events/webhooks/w1', 'Lifecycle webhooks are'],
      ['DELETE', '/events/webhooks/w1', 'Lifecycle webhooks are'],
    ]
    for (const [method, path, feature] of routes) {
      const answer = await callApi(serve.client, method, path, method === 'GET' ? undefined : {})
      expect({ route: `${method} ${path}`, ...answer }).toEqual({
        route: `${method} ${path}`,
        status: 501,
        body: { code: 501, message: expect.stringMatching(new RegExp(`^${feature} ${NOT_YET}`)) },
      })
    }
  })

  it('keeps E2B 404 for paths the contract does not have, and 401 without a key', async () => {
    for (const path of ['/no-such-route', `/sandboxes/${sandbox.sandboxId}/no-such-action`]) {
      expect(await callApi(serve.client, 'GET', path)).toEqual({
        status: 404,
        body: { code: 404, message: 'Not Found' },
      })
    }
    expect((await fetch(`${serve.client.apiUrl}/volumes`)).status).toBe(401)
  })
})

describe('fields Sandbar cannot honour answer 400 naming the field', () => {
  /** Sandbox.create's rejection for `options`; no sandbox may be left from it. */
  async function refusedCreate(options: SandboxOpts): Promise<Error> {
    const metadata = { refusal: Math.random().toString(36).slice(2) }
    const error = await rejection(Sandbox.create({ ...opts(), ...options, metadata }))
    const left = await Sandbox.list({ ...opts(), query: { metadata } }).nextItems()
    expect(left).toEqual([])
    return error
  }

  it('mcp, before the SDK starts a gateway that is not there', async () => {
    const error = await refusedCreate({ mcp: { exa: { apiKey: 'not-a-key' } } })
    expect(error).toBeInstanceOf(SandboxError)
    expect(error.message).toBe(
      '400: mcp is not supported by this Sandbar server yet: it has no MCP gateway (no mcp-gateway template or binary), so the gateway would not start. Create the sandbox without mcp and run the MCP servers you need inside it.',
    )
  })

  it('network rules, egress proxy and HTTPS ports, iam tokens, memoryless auto-pause', async () => {
    const cases: [SandboxOpts, string][] = [
      [
        {
          network: { rules: { 'api.example.com': [{ transform: { headers: { 'X-Key': 'k' } } }] } },
        },
        'network.rules',
      ],
      [{ network: { egressProxy: { address: 'proxy.example.com:1080' } } }, 'network.egressProxy'],
      [{ network: { httpsPorts: [8443] } }, 'network.httpsPorts'],
      [
        {
          iam: {
            tokens: {
              aws: Secret.iamToken({ audience: 'sts.amazonaws.com', tokenType: 'JWT-SVID' }),
            },
          },
        },
        'iam',
      ],
    ]
    for (const [options, field] of cases) {
      const error = await refusedCreate(options)
      expect(error).toBeInstanceOf(SandboxError)
      expect(error.message.startsWith(`400: ${field} is ${NOT_YET}`), error.message).toBe(true)
    }
  })

  it('leaves empty values and supported fields alone', async () => {
    const accepted = await Sandbox.create({
      ...opts(),
      volumeMounts: {},
      network: { rules: {}, allowOut: ['1.1.1.1'], denyOut: ['0.0.0.0/0'] },
      lifecycle: { onTimeout: { action: 'pause', keepMemory: true }, autoResume: true },
    })
    try {
      expect((await accepted.getInfo()).lifecycle).toEqual({ onTimeout: 'pause', autoResume: true })
    } finally {
      await accepted.kill()
    }
  })

  it('network updates with rules or an egress proxy', async () => {
    const rules = await rejection(
      sandbox.updateNetwork({
        rules: { 'api.example.com': [{ transform: { headers: { a: 'b' } } }] },
      }),
    )
    expect(rules).toBeInstanceOf(SandboxError)
    expect(rules.message.startsWith(`400: rules is ${NOT_YET}`), rules.message).toBe(true)
    const proxy = await rejection(
      sandbox.updateNetwork({ egressProxy: { address: 'proxy.example.com:1080' } }),
    )
    expect(proxy.message.startsWith(`400: egressProxy is ${NOT_YET}`), proxy.message).toBe(true)
    await sandbox.updateNetwork({ denyOut: ['10.9.8.0/24'] })
    expect((await sandbox.getInfo()).network?.denyOut).toEqual(['10.9.8.0/24'])
  })
})

describe("the concurrency limit is this host's", () => {
  it('prints the limit at start, and why', () => {
    expect(serve.output()).toMatch(
      /^Up to 2 sandboxes at once, as --max-sandboxes says; with every sandbox at its limits this host holds \d+: \d+ by .+\.$/m,
    )
  })

  it('refuses the third sandbox with RateLimitError naming the limit and --max-sandboxes', async () => {
    const second = await Sandbox.create(opts())
    try {
      const third = await rejection(Sandbox.create(opts()))
      expect(third).toBeInstanceOf(RateLimitError)
      expect(third.message).toBe(
        'Rate limit exceeded, please try again later - you have reached the maximum number of concurrent sandboxes on this Sandbar server (2). Kill or pause one, or have its operator restart sandbar serve with a higher --max-sandboxes (its start output says what bounds the limit on this host)',
      )
    } finally {
      await second.kill()
    }
    const again = await Sandbox.create(opts())
    await again.kill()
  })
})
