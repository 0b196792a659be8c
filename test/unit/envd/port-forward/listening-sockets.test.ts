import { execFile } from 'node:child_process'
import { once } from 'node:events'
import net from 'node:net'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import {
  formatAddress,
  listeningSockets,
} from '../../../../src/envd/port-forward/listening-sockets.js'

const servers: net.Server[] = []

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))))
})

/** A server of this test's own listening on `host`, port chosen by the kernel. */
async function listen(host: string, options: { ipv6Only?: boolean } = {}): Promise<number> {
  const server = net.createServer()
  servers.push(server)
  server.listen({ host, port: 0, ...options })
  await once(server, 'listening')
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return address.port
}

describe('listeningSockets', () => {
  it('lists this namespace’s IPv4 and IPv6 listeners from the kernel, and only while they listen', async () => {
    const loopback = await listen('127.0.0.1')
    const any = await listen('0.0.0.0')
    const loopback6 = await listen('::1')
    const any6 = await listen('::', { ipv6Only: true })
    const sockets = listeningSockets()
    expect(sockets).toContainEqual({ address: '127.0.0.1', port: loopback })
    expect(sockets).toContainEqual({ address: '0.0.0.0', port: any })
    expect(sockets).toContainEqual({ address: '::1', port: loopback6 })
    expect(sockets).toContainEqual({ address: '::', port: any6 })

    await new Promise((done) => servers.splice(0, 1)[0]?.close(done))
    expect(listeningSockets()).not.toContainEqual({ address: '127.0.0.1', port: loopback })
  })

  it('leaves out connected sockets, which are not listening', async () => {
    const port = await listen('127.0.0.1')
    const client = net.connect({ host: '127.0.0.1', port })
    await once(client, 'connect')
    try {
      const ports = listeningSockets().map((socket) => socket.port)
      expect(ports.filter((listed) => listed === port)).toHaveLength(1)
      expect(ports).not.toContain(client.localPort)
    } finally {
      client.destroy()
    }
  })
})

describe('watchListeningTcpSockets', () => {
  it('calls at the start and on each change of listeners or addresses, never while all stays', async () => {
    // In a network namespace of its own: the host's, shared with other tests, never stays.
    const { stdout } = await promisify(execFile)('unshare', [
      '--net',
      process.execPath,
      new URL('watch-sockets-child.mjs', import.meta.url).pathname,
      new URL('../../../../build/Release/listening_sockets.node', import.meta.url).pathname,
    ])
    expect(JSON.parse(stdout)).toEqual({
      started: 1,
      listening: 2,
      quiet: 2,
      addressAdded: 3,
      closed: 4,
      afterStop: 4,
    })
  })
})

describe('formatAddress', () => {
  it('writes IPv4 dotted, and an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(formatAddress(Uint8Array.of(10, 233, 0, 2))).toBe('10.233.0.2')
    expect(
      formatAddress(Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1)),
    ).toBe('127.0.0.1')
  })

  it('writes IPv6 in RFC 5952 form: the longest run of zero groups as ::', () => {
    expect(formatAddress(new Uint8Array(16))).toBe('::')
    expect(formatAddress(Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))).toBe('::1')
    expect(formatAddress(Uint8Array.of(0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2))).toBe(
      'fd00::2',
    )
    expect(
      formatAddress(Uint8Array.of(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1)),
    ).toBe('2001:db8::1:0:0:1')
  })
})
