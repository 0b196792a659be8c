import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Hono } from 'hono'
import { pino } from 'pino'
import { z } from 'zod'
import { createHttpApp } from '../../../../src/envd/http/app.js'
import { HOST_SETPRIV } from '../../../../src/envd/process/setpriv-prefix.js'
import { EnvdState } from '../../../../src/envd/state.js'
import { UserDirectory } from '../../../../src/envd/users.js'

/** The unprivileged account of the fixture, with its home inside the temp root. */
export const USER_UID = 1000

export interface FileRoutesFixture {
  app: Hono
  state: EnvdState
  /** Temp root: `etc/passwd`, `home/user` (uid 1000), `root` (root's home). */
  root: string
  userHome: string
  cleanup(): Promise<void>
}

/**
 * envd's real HTTP app over a temp directory (`/tmp/sbt-*`) whose `etc/passwd` names `root`
 * and `user`, with `user` as the default user, as `/init` leaves a sandbox.
 */
export async function fileRoutesFixture(): Promise<FileRoutesFixture> {
  const root = await mkdtemp('/tmp/sbt-files-')
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
  const app = createHttpApp({
    state,
    users: new UserDirectory(root),
    logger: pino({ level: 'silent' }),
    setpriv: [HOST_SETPRIV],
  })
  return { app, state, root, userHome, cleanup: () => rm(root, { recursive: true, force: true }) }
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
