import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { pino } from 'pino'
import { z } from 'zod'
import { createHttpRoutes } from '../../../../src/envd/http/routes.js'
import { EnvdState } from '../../../../src/envd/state.js'
import { UserDirectory } from '../../../../src/envd/users.js'
import { testRunAs } from '../../../support/run-as.js'

/** The unprivileged account of the fixture, with its home inside the temp root. */
export const USER_UID = 1000

export interface FileRoutesFixture {
  /** Sends a request to the routes, served on loopback, and returns the reply's bytes as sent. */
  request(url: string, init?: RequestInit): Promise<Response>
  state: EnvdState
  /** Temp root: `etc/passwd`, `home/user` (uid 1000), `root` (root's home). */
  root: string
  userHome: string
  cleanup(): Promise<void>
}

/**
 * envd's real HTTP routes, on a loopback server, over a temp directory (`/tmp/sbt-*`) whose `etc/passwd` names `root`
 * and `user`, with `user` as the default user, as `/init` leaves a sandbox.
 */
export async function fileRoutesFixture(): Promise<FileRoutesFixture> {
  const root = await mkdtemp('/tmp/sbt-files-')
  // envd acts with the user's credentials, so the user must be able to walk down from here.
  await chmod(root, 0o755)
  const userHome = path.join(root, 'home/user')
  const rootHome = path.join(root, 'root')
  await mkdir(path.join(root, 'etc'))
  await mkdir(userHome, { recursive: true })
  await chown(userHome, USER_UID, USER_UID)
  await mkdir(rootHome, { mode: 0o700 })
  await writeFile(
    path.join(root, 'etc/passwd'),
    `root:x:0:0:root:${rootHome}:/bin/bash\nuser:x:${USER_UID}:${USER_UID}::${userHome}:/bin/bash\n`,
  )
  await writeFile(path.join(root, 'etc/group'), `root:x:0:\nuser:x:${USER_UID}:\n`)
  const state = new EnvdState({ E2B_SANDBOX: 'true' })
  state.applyInit({ defaultUser: 'user' })
  const routes = createHttpRoutes({
    state,
    users: new UserDirectory(root),
    logger: pino({ level: 'silent' }),
    runAs: await testRunAs(),
  })
  const server = http.createServer(routes)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    request: (url, init) => sendRequest(port, new Request(url, init)),
    state,
    root,
    userHome,
    cleanup: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await rm(root, { recursive: true, force: true })
    },
  }
}

/**
 * Sends `request` to the loopback port with node:http, which leaves a gzip reply gzipped
 * (fetch would decode it), and answers with what the server wrote.
 */
async function sendRequest(port: number, request: Request): Promise<Response> {
  const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer())
  const url = new URL(request.url)
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(request.headers),
      },
      (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('error', reject)
        incoming.on('end', () => {
          const status = incoming.statusCode ?? 0
          const headers = new Headers()
          for (const [name, value] of Object.entries(incoming.headers)) {
            for (const one of [value ?? []].flat()) headers.append(name, one)
          }
          const bodyless = status === 204 || status === 304 || request.method === 'HEAD'
          resolve(new Response(bodyless ? null : Buffer.concat(chunks), { status, headers }))
        })
      },
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

/** `/files?…` with the given query parameters. */
export function filesUrl(query: Record<string, string>): string {
  return `http://envd/files?${new URLSearchParams(query)}`
}

const errorSchema = z.object({ code: z.number(), message: z.string() })
const entriesSchema = z.array(
  z.object({
    path: z.string(),
    name: z.string(),
    type: z.literal('file'),
    metadata: z.record(z.string(), z.string()).optional(),
  }),
)

/** The `{code, message}` body of an error response. */
export async function errorOf(response: Response): Promise<z.infer<typeof errorSchema>> {
  return errorSchema.parse(await response.json())
}

/** The `EntryInfo` array an upload answers with. */
export async function entriesOf(response: Response): Promise<z.infer<typeof entriesSchema>> {
  return entriesSchema.parse(await response.json())
}
