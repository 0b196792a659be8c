import { connect } from 'node:net'

/** An HTTP/1.1 answer as it came off the wire. */
export interface RawAnswer {
  status: number
  /** Everything after the blank line that ends the headers. */
  body: string
}

/**
 * Writes `request` (a whole HTTP/1.1 message, `\r\n` line ends) to a TCP port byte for byte and
 * reads the answer until the server closes. A client library would normalize the request
 * target (`/./init` becomes `/init`), which is what attack spellings must not get.
 */
export function rawRequest(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.once('error', reject)
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString()
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
      const bodyAt = text.indexOf('\r\n\r\n')
      resolve({ status, body: bodyAt === -1 ? '' : text.slice(bodyAt + 4) })
    })
  })
}

/** A POST with a JSON body, closing the connection after the answer. */
export function rawPost(target: string, headers: Record<string, string>, body: string): string {
  const lines = [`POST ${target} HTTP/1.1`]
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
  lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`)
  lines.push('Connection: close', '', body)
  return lines.join('\r\n')
}
