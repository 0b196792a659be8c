import { describe, expect, inject, it } from 'vitest'
import { z } from 'zod'
import { sandboxTest } from '../setup.js'

// What a misbehaving client sends straight to envd's Connect endpoints, and the Connect error
// code each gets (wire contract §3.1: Connect protocol, JSON and binary codecs). The official
// SDK never sends these, so they go over plain fetch.
const envd = inject('envdUrl')

async function unary(method: string, body: string | Uint8Array, contentType = 'application/json') {
  const response = await fetch(`${envd}/${method}`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'connect-protocol-version': '1' },
    body,
  })
  const text = await response.text()
  return { status: response.status, text, type: response.headers.get('content-type') }
}

const connectErrorBody = z.object({ code: z.string(), message: z.string() })

function connectError(text: string): z.infer<typeof connectErrorBody> {
  return connectErrorBody.parse(JSON.parse(text))
}

describe('bad input to envd RPCs', () => {
  it('rejects malformed JSON with invalid_argument', async () => {
    const { status, text } = await unary('filesystem.Filesystem/Stat', '{"path": ')
    expect(status).toBe(400)
    expect(connectError(text).code).toBe('invalid_argument')
  })

  it('rejects malformed protobuf and changes nothing', async () => {
    // connect-es reports an undecodable binary request as `internal` ("parse binary: …"),
    // where connect-go says `invalid_argument`; the e2b SDKs only speak JSON.
    const garbage = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])
    const { status, text } = await unary('filesystem.Filesystem/Stat', garbage, 'application/proto')
    expect(status).toBe(500)
    expect(connectError(text)).toMatchObject({ code: 'internal', message: /^parse binary/ })
  })

  it('serves the binary codec too', async () => {
    // StatRequest{path: "/"}: field 1, wire type 2, length 1, "/".
    const request = new Uint8Array([0x0a, 0x01, 0x2f])
    const response = await fetch(`${envd}/filesystem.Filesystem/Stat`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto', 'connect-protocol-version': '1' },
      body: request,
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/proto')
    // StatResponse{entry = 1: EntryInfo{name = 1: "/"...}}: starts with field 1, wire type 2.
    expect(new Uint8Array(await response.arrayBuffer())[0]).toBe(0x0a)
  })

  it('rejects an unsupported content type with 415', async () => {
    const { status } = await unary('filesystem.Filesystem/Stat', '{"path":"/"}', 'text/plain')
    expect(status).toBe(415)
  })

  it('rejects bad base64 in process input with invalid_argument', async () => {
    const body = JSON.stringify({ process: { pid: 1 }, input: { stdin: '!!not base64!!' } })
    const { status, text } = await unary('process.Process/SendInput', body)
    expect(status).toBe(400)
    expect(connectError(text).code).toBe('invalid_argument')
  })

  sandboxTest('refuses an unknown signal and leaves the process running', async ({ sandbox }) => {
    const handle = await sandbox.commands.run('sleep 30', { background: true })
    // An enum name the schema lacks reads as SIGNAL_UNSPECIFIED, which envd does not send.
    const body = JSON.stringify({ process: { pid: handle.pid }, signal: 'SIGNAL_SIGHUP' })
    const { status, text } = await unary('process.Process/SendSignal', body)
    expect(status).toBe(501)
    expect(connectError(text).code).toBe('unimplemented')
    expect((await sandbox.commands.list()).map((p) => p.pid)).toContain(handle.pid)
  })

  it('answers an unknown pid or tag with not_found', async () => {
    const byPid = await unary(
      'process.Process/SendSignal',
      JSON.stringify({ process: { pid: 999_999 }, signal: 'SIGNAL_SIGKILL' }),
    )
    expect(byPid.status).toBe(404)
    expect(connectError(byPid.text)).toEqual({
      code: 'not_found',
      message: 'process with pid 999999 not found',
    })
    const byTag = await unary(
      'process.Process/CloseStdin',
      JSON.stringify({ process: { tag: 'sbt-no-such-tag' } }),
    )
    expect(byTag.status).toBe(404)
    expect(connectError(byTag.text)).toEqual({
      code: 'not_found',
      message: 'process with tag sbt-no-such-tag not found',
    })
  })

  it('answers an unknown user with unauthenticated', async () => {
    const response = await fetch(`${envd}/filesystem.Filesystem/Stat`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from('sbt-ghost:').toString('base64')}`,
      },
      body: JSON.stringify({ path: '/' }),
    })
    expect(response.status).toBe(401)
    expect(connectError(await response.text())).toEqual({
      code: 'unauthenticated',
      message: "invalid username: 'sbt-ghost'",
    })
  })

  it('answers an unknown method with 404', async () => {
    const { status } = await unary('process.Process/NoSuchMethod', '{}')
    expect(status).toBe(404)
  })
})
