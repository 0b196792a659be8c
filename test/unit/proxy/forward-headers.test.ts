import { describe, expect, it } from 'vitest'
import {
  canonicalName,
  endToEndHeaders,
  upstreamHeaders,
} from '../../../src/proxy/forward-headers.js'

const target = { sandboxID: 'isbx', port: 8080, viaHeaders: true }

describe('endToEndHeaders', () => {
  it('drops hop-by-hop fields and those Connection names', () => {
    expect(
      endToEndHeaders({
        connection: 'keep-alive, X-Secret',
        'keep-alive': 'timeout=5',
        'x-secret': 'a',
        'transfer-encoding': 'chunked',
        te: 'trailers',
        'proxy-authorization': 'Basic x',
        'content-type': 'application/json',
        trailer: 'grpc-status',
      }),
    ).toEqual({ 'content-type': 'application/json', trailer: 'grpc-status' })
  })
})

describe('upstreamHeaders', () => {
  it('keeps Host and adds X-Forwarded-*', () => {
    expect(
      upstreamHeaders(
        { host: 'localhost:3001', 'e2b-sandbox-id': 'isbx' },
        { target, domain: 'sandbar.test', clientAddress: '127.0.0.1', tls: false },
      ),
    ).toEqual({
      Host: 'localhost:3001',
      'E2b-Sandbox-Id': 'isbx',
      'X-Forwarded-For': '127.0.0.1',
      'X-Forwarded-Host': 'localhost:3001',
      'X-Forwarded-Proto': 'http',
    })
  })

  it('rewrites the shared sandbox host and extends a forwarding chain', () => {
    const out = upstreamHeaders(
      {
        host: 'sandbox.sandbar.test',
        'x-forwarded-for': '1.2.3.4',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'sandbox.sandbar.test',
      },
      { target, domain: 'sandbar.test', clientAddress: '10.0.0.1', tls: false },
    )
    expect(out).toMatchObject({
      Host: '8080-isbx.sandbar.test',
      'X-Forwarded-For': '1.2.3.4, 10.0.0.1',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'sandbox.sandbar.test',
    })
  })
})

describe('upstreamHeaders on a domain with a port, over TLS', () => {
  const context = { domain: 'sandbar.localhost:3001', clientAddress: '127.0.0.1', tls: true }

  it('rewrites the shared sandbox host keeping the port, and says https', () => {
    const out = upstreamHeaders({ host: 'sandbox.sandbar.localhost:3001' }, { ...context, target })
    expect(out).toMatchObject({
      Host: '8080-isbx.sandbar.localhost:3001',
      'X-Forwarded-Host': 'sandbox.sandbar.localhost:3001',
      'X-Forwarded-Proto': 'https',
    })
  })
})

describe('upstreamHeaders with maskRequestHost', () => {
  const context = { domain: 'sandbar.test', clientAddress: '127.0.0.1', tls: false }
  const host = '5173-isbx.sandbar.test'

  it('replaces Host on a user port, with the port filled in, and keeps the real one forwarded', () => {
    const out = upstreamHeaders(
      { host },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's placeholder, not a template
      { ...context, target: { ...target, port: 5173 }, maskRequestHost: 'localhost:${PORT}' },
    )
    expect(out).toMatchObject({ Host: 'localhost:5173', 'X-Forwarded-Host': host })
  })

  it("leaves envd's port its real Host", () => {
    const out = upstreamHeaders(
      { host },
      { ...context, target: { ...target, port: 49983 }, maskRequestHost: 'localhost' },
    )
    expect(out.Host).toBe(host)
  })
})

describe("upstreamHeaders and Sandbar's credentials", () => {
  const sent = {
    host: 'localhost:3001',
    'x-api-key': 'e2b_key',
    'x-access-token': 'envd-token',
    'e2b-traffic-access-token': 'traffic',
    authorization: 'Basic dXNlcjo=',
  }
  const context = { domain: 'sandbar.test', clientAddress: '127.0.0.1', tls: false }

  it('drops the API key, the traffic token and the envd token on a user port', () => {
    const out = upstreamHeaders(sent, { ...context, target })
    expect(Object.keys(out).sort()).toEqual([
      'Authorization',
      'Host',
      'X-Forwarded-For',
      'X-Forwarded-Host',
      'X-Forwarded-Proto',
    ])
  })

  it.each([49983, 49999])(
    "keeps envd's X-Access-Token on port %i (envd, the code interpreter), and nothing else of Sandbar's",
    (port) => {
      const out = upstreamHeaders(sent, { ...context, target: { ...target, port } })
      expect(out).toMatchObject({
        'X-Access-Token': 'envd-token',
        Authorization: 'Basic dXNlcjo=',
      })
      expect(Object.keys(out).map((name) => name.toLowerCase())).not.toContain('x-api-key')
      expect(Object.keys(out).map((name) => name.toLowerCase())).not.toContain(
        'e2b-traffic-access-token',
      )
    },
  )
})

describe('canonicalName', () => {
  it.each([
    ['host', 'Host'],
    ['x-forwarded-for', 'X-Forwarded-For'],
    ['E2B-SANDBOX-ID', 'E2b-Sandbox-Id'],
    ['content-md5', 'Content-Md5'],
  ])('writes %s as Go does: %s', (name, expected) => {
    expect(canonicalName(name)).toBe(expected)
  })

  it('answers the same for a name seen before and for names past what it keeps', () => {
    const names = Array.from({ length: 1_000 }, (_, i) => `x-custom-${i}-NAME`)
    for (const name of names) canonicalName(name)
    expect(names.map(canonicalName)).toEqual(names.map((_, i) => `X-Custom-${i}-Name`))
  })
})
