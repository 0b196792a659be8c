import { describe, expect, it } from 'vitest'
import { endToEndHeaders, upstreamHeaders } from '../../../src/proxy/forward-headers.js'

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
      host: 'localhost:3001',
      'e2b-sandbox-id': 'isbx',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-host': 'localhost:3001',
      'x-forwarded-proto': 'http',
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
      host: '8080-isbx.sandbar.test',
      'x-forwarded-for': '1.2.3.4, 10.0.0.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'sandbox.sandbar.test',
    })
  })
})

describe('upstreamHeaders on a domain with a port, over TLS', () => {
  const context = { domain: 'sandbar.localhost:3001', clientAddress: '127.0.0.1', tls: true }

  it('rewrites the shared sandbox host keeping the port, and says https', () => {
    const out = upstreamHeaders({ host: 'sandbox.sandbar.localhost:3001' }, { ...context, target })
    expect(out).toMatchObject({
      host: '8080-isbx.sandbar.localhost:3001',
      'x-forwarded-host': 'sandbox.sandbar.localhost:3001',
      'x-forwarded-proto': 'https',
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
    expect(out).toMatchObject({ host: 'localhost:5173', 'x-forwarded-host': host })
  })

  it("leaves envd's port its real Host", () => {
    const out = upstreamHeaders(
      { host },
      { ...context, target: { ...target, port: 49983 }, maskRequestHost: 'localhost' },
    )
    expect(out.host).toBe(host)
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
      'authorization',
      'host',
      'x-forwarded-for',
      'x-forwarded-host',
      'x-forwarded-proto',
    ])
  })

  it.each([49983, 49999])(
    "keeps envd's X-Access-Token on port %i (envd, the code interpreter), and nothing else of Sandbar's",
    (port) => {
      const out = upstreamHeaders(sent, { ...context, target: { ...target, port } })
      expect(out).toMatchObject({
        'x-access-token': 'envd-token',
        authorization: 'Basic dXNlcjo=',
      })
      expect(out).not.toHaveProperty('x-api-key')
      expect(out).not.toHaveProperty('e2b-traffic-access-token')
    },
  )
})
