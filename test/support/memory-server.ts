import type { Sandbox } from 'e2b'
import { expect } from 'vitest'

/**
 * A command that starts a Python HTTP server on `address`:8000 whose whole state lives in its
 * memory: a random secret drawn at start and a count of the requests it answered, which it
 * answers as `<secret> <count>`. What survives a pause, a hibernation or a restore is only
 * what the process kept.
 */
export function memoryServerCommand(address: string): string {
  return `python3 -c '
import http.server, os
state = {"secret": os.urandom(8).hex(), "hits": 0}
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        state["hits"] += 1
        body = ("%s %d" % (state["secret"], state["hits"])).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("${address}", 8000), Handler).serve_forever()
'`
}

/** The memory server's state at `address` (reached from the host), one request counted. */
export async function memoryServerState(
  address: string,
): Promise<{ secret: string; hits: number }> {
  const [secret = '', hits = ''] = (await (await fetch(`http://${address}:8000/`)).text()).split(
    ' ',
  )
  return { secret, hits: Number(hits) }
}

/** The memory server's `<secret> <count>`, asked from inside the sandbox through the SDK. */
export async function memoryServerAnswer(sandbox: Sandbox): Promise<string> {
  return (await sandbox.commands.run('curl -s http://127.0.0.1:8000/')).stdout
}

/**
 * Starts the memory server in the sandbox on loopback, through the SDK, and returns the secret
 * it drew; it has answered twice then (its first answer awaited, then the secret read).
 */
export async function startMemoryServer(sandbox: Sandbox): Promise<string> {
  await sandbox.commands.run(memoryServerCommand('127.0.0.1'), { background: true, timeoutMs: 0 })
  await expect
    .poll(() => memoryServerAnswer(sandbox), { timeout: 10_000 })
    .toMatch(/^[0-9a-f]{16} 1$/)
  return (await memoryServerAnswer(sandbox)).split(' ')[0] ?? ''
}
