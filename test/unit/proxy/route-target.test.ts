import { describe, expect, it } from 'vitest'
import { ProxyError } from '../../../src/proxy/proxy-errors.js'
import { hostnameOf, routeTarget } from '../../../src/proxy/route-target.js'

const DOMAIN = 'sandbar.test'
const ID = 'i1a2b3c4d5e6f7g8h9j0k'

function rejection(run: () => unknown): { status: number; body: string } {
  try {
    run()
  } catch (error: unknown) {
    if (error instanceof ProxyError) return { status: error.status, body: error.body }
    throw error
  }
  throw new Error('expected a ProxyError')
}

describe('routeTarget from the host', () => {
  it('reads <port>-<sandboxID>.<domain>', () => {
    expect(routeTarget(`49983-${ID}.${DOMAIN}`, {}, DOMAIN)).toEqual({
      sandboxID: ID,
      port: 49983,
      viaHeaders: false,
    })
  })

  it('ignores the host port, letter case and a legacy clientID', () => {
    expect(routeTarget(`8080-${ID.toUpperCase()}-6532622b.${DOMAIN}:3001`, {}, DOMAIN)).toEqual({
      sandboxID: ID,
      port: 8080,
      viaHeaders: false,
    })
  })

  it('accepts any domain suffix, as E2B does', () => {
    expect(routeTarget(`3000-${ID}.example.com`, {}, DOMAIN).sandboxID).toBe(ID)
  })

  it('uses the host when routing headers arrive on a sandbox host', () => {
    const headers = { 'e2b-sandbox-id': 'other', 'e2b-sandbox-port': '1' }
    expect(routeTarget(`3000-${ID}.${DOMAIN}`, headers, DOMAIN).port).toBe(3000)
  })

  it.each([
    ['no host', undefined],
    ['no dot', `3000-${ID}`],
    ['no dash', `${ID}.${DOMAIN}`],
    ['localhost without headers', 'localhost:3001'],
    ['an IP without headers', '127.0.0.1:3001'],
  ])('answers 400 Invalid host for %s', (_, host) => {
    expect(rejection(() => routeTarget(host, {}, DOMAIN))).toEqual({
      status: 400,
      body: 'Invalid host\n',
    })
  })

  it.each(['abc', '0', '65536', '-1', '1e3', '123456'])('answers 400 for port %s', (port) => {
    expect(rejection(() => routeTarget(`${port}-${ID}.${DOMAIN}`, {}, DOMAIN))).toEqual({
      status: 400,
      body: 'Invalid sandbox port\n',
    })
  })

  it.each(['i_x', 'a'.repeat(64), 'i%20x'])('answers 400 for sandbox ID %s', (id) => {
    expect(rejection(() => routeTarget(`3000-${id}.${DOMAIN}`, {}, DOMAIN))).toEqual({
      status: 400,
      body: 'Invalid sandbox ID\n',
    })
  })

  it('answers 400 Invalid sandbox ID for an empty ID', () => {
    expect(rejection(() => routeTarget(`3000-.${DOMAIN}`, {}, DOMAIN)).body).toBe(
      'Invalid sandbox ID\n',
    )
  })
})

describe('routeTarget from headers', () => {
  const headers = { 'e2b-sandbox-id': ID, 'e2b-sandbox-port': '49983' }

  it.each([
    'localhost',
    'localhost:3001',
    '127.0.0.1:3001',
    '10.1.2.3',
    '[::1]:3001',
    '::1',
    `sandbox.${DOMAIN}`,
    `SANDBOX.${DOMAIN.toUpperCase()}:443`,
  ])('reads E2b-Sandbox-Id and E2b-Sandbox-Port on %s', (host) => {
    expect(routeTarget(host, headers, DOMAIN)).toEqual({
      sandboxID: ID,
      port: 49983,
      viaHeaders: true,
    })
  })

  it('strips a legacy clientID from the header ID', () => {
    const legacy = { 'e2b-sandbox-id': `${ID}-6532622b`, 'e2b-sandbox-port': '3000' }
    expect(routeTarget('localhost', legacy, DOMAIN).sandboxID).toBe(ID)
  })

  it('ignores routing headers on sandbox.<other domain>', () => {
    expect(rejection(() => routeTarget('sandbox.example.com', headers, DOMAIN)).body).toBe(
      'Invalid host\n',
    )
  })

  it.each([
    { 'e2b-sandbox-id': ID },
    { 'e2b-sandbox-port': '3000' },
    { 'e2b-sandbox-id': ID, 'e2b-sandbox-port': ' ' },
  ])('answers 400 missing header when one is missing: %o', (partial) => {
    expect(rejection(() => routeTarget('localhost', partial, DOMAIN))).toEqual({
      status: 400,
      body: 'missing header\n',
    })
  })

  it('answers 400 for a bad header port or ID', () => {
    const badPort = { 'e2b-sandbox-id': ID, 'e2b-sandbox-port': 'http' }
    const badID = { 'e2b-sandbox-id': 'debug_sandbox_id', 'e2b-sandbox-port': '49983' }
    expect(rejection(() => routeTarget('localhost', badPort, DOMAIN)).body).toBe(
      'Invalid sandbox port\n',
    )
    expect(rejection(() => routeTarget('localhost', badID, DOMAIN)).body).toBe(
      'Invalid sandbox ID\n',
    )
  })
})

describe('hostnameOf', () => {
  it.each([
    ['LocalHost:3001', 'localhost'],
    ['[::1]:80', '::1'],
    ['::1', '::1'],
    ['a.b', 'a.b'],
    ['', ''],
  ])('%s → %s', (host, name) => {
    expect(hostnameOf(host)).toBe(name)
  })
})
