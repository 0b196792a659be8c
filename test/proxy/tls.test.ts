import { once } from 'node:events'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { createServer } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect as tcpConnect } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { connect as tlsConnect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureLocalCertificate, type SandboxProxy } from '../../src/proxy/index.js'
import {
  listenOn,
  MapDirectory,
  type ProxyAnswer,
  send,
  startProxy,
  stopServer,
} from './proxy-fixture.js'
import { ADDRESS_A } from './upstreams.js'

// One port speaks HTTPS (the SDK's `https://<port>-<id>.<domain>`) and plain HTTP (a browser on
// this machine), and answers `api.<domain>` with the API, under Sandbar's own certificate.
const DOMAIN = 'sbt.localhost'
let certDir = ''
let ca: Buffer
let proxy: SandboxProxy
let proxyPort = 0
let sandboxPort = 0
const sandbox = createServer((req, res) => {
  res.end(JSON.stringify({ host: req.headers.host, proto: req.headers['x-forwarded-proto'] }))
})

beforeAll(async () => {
  certDir = await mkdtemp(path.join(tmpdir(), 'sbt-tls-'))
  const files = await ensureLocalCertificate(certDir, DOMAIN)
  ca = await readFile(files.caFile ?? '')
  sandboxPort = await listenOn(sandbox, ADDRESS_A)
  const directory = new MapDirectory()
  directory.sandboxes.set('isbxa', {
    sandboxID: 'isbxa',
    address: ADDRESS_A,
    state: 'running',
    autoResume: false,
  })
  ;({ proxy, port: proxyPort } = await startProxy(directory, {
    domain: `${DOMAIN}:0`,
    tls: { cert: await readFile(files.certFile), key: await readFile(files.keyFile) },
    api: (req, res) => res.end(`api saw ${req.url}`),
  }))
})

afterAll(async () => {
  await proxy?.close()
  await stopServer(sandbox)
  await rm(certDir, { recursive: true, force: true })
})

/** A request over TLS to the proxy for `host`, trusting only the local authority. */
async function sendTls(host: string, requestPath = '/'): Promise<ProxyAnswer> {
  const req = httpsRequest({
    host: '127.0.0.1',
    port: proxyPort,
    path: requestPath,
    servername: host.split(':')[0],
    headers: { host },
    ca,
  })
  req.end()
  const [res] = await once(req, 'response')
  const chunks: Buffer[] = []
  for await (const chunk of res) chunks.push(Buffer.from(chunk))
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }
}

describe('one port for HTTPS and HTTP', () => {
  it('reaches a sandbox port over both, and tells it which', async () => {
    const host = `${sandboxPort}-isbxa.${DOMAIN}:${proxyPort}`
    expect(JSON.parse((await sendTls(host)).body)).toEqual({ host, proto: 'https' })
    expect(JSON.parse((await send(proxyPort, { host })).body)).toEqual({ host, proto: 'http' })
  })

  it('hands api.<domain> to the API, over both', async () => {
    const host = `api.${DOMAIN}:${proxyPort}`
    expect((await sendTls(host, '/sandboxes')).body).toBe('api saw /sandboxes')
    expect((await send(proxyPort, { host, path: '/health' })).body).toBe('api saw /health')
  })

  it('presents a certificate a client refuses for names outside the domain', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port: proxyPort, servername: 'example.com', ca })
    const [error] = await once(socket, 'error')
    expect((error as NodeJS.ErrnoException).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID')
  })

  it('closes a connection that starts a handshake and goes silent', async () => {
    const socket = tcpConnect({ host: '127.0.0.1', port: proxyPort })
    socket.on('error', () => {})
    await once(socket, 'connect')
    socket.write(Buffer.from([0x16, 0x03, 0x01]))
    const started = Date.now()
    await once(socket, 'close')
    expect(Date.now() - started).toBeGreaterThanOrEqual(19_000)
  }, 30_000)
})

describe('the local certificate', () => {
  it('is made once, with the authority key deleted and the server key private', async () => {
    const again = await ensureLocalCertificate(certDir, DOMAIN)
    expect(await readFile(again.caFile ?? '')).toEqual(ca)
    expect((await stat(again.keyFile)).mode & 0o777).toBe(0o600)
    await expect(stat(path.join(certDir, 'ca.key'))).rejects.toThrow(/ENOENT/)
  })

  it('is made anew for another domain', async () => {
    const other = await ensureLocalCertificate(certDir, 'other.localhost')
    expect(await readFile(other.caFile ?? '')).not.toEqual(ca)
    await ensureLocalCertificate(certDir, DOMAIN)
  })
})
