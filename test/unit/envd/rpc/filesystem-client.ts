import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type Client, createClient, createRouterTransport } from '@connectrpc/connect'
import { pino } from 'pino'
import type { EnvdContext } from '../../../../src/envd/context.js'
import { Filesystem } from '../../../../src/envd/gen/filesystem/filesystem_pb.js'
import { createFilesystemService } from '../../../../src/envd/rpc/filesystem-service.js'
import { EnvdState } from '../../../../src/envd/state.js'
import { UserDirectory } from '../../../../src/envd/users.js'
import { testRunAs } from '../../../support/run-as.js'

export type FilesystemClient = Client<typeof Filesystem>

/** Request options that act as `username` (`Authorization: Basic base64("<user>:")`). */
export function asUser(username: string): { headers: Record<string, string> } {
  return { headers: { authorization: `Basic ${Buffer.from(`${username}:`).toString('base64')}` } }
}

/**
 * The filesystem service behind an in-memory Connect transport, acting for accounts of its
 * own: envd's default user `root`, whose home (where relative paths resolve) is a fresh temp
 * dir, and `nobody` for permission checks.
 */
export async function createTestFilesystem(): Promise<{
  client: FilesystemClient
  dir: string
  dispose(): Promise<void>
}> {
  const dir = await realpath(await mkdtemp('/tmp/sbt-fs-'))
  // envd acts with the request user's credentials: `nobody` must be able to walk in here.
  await chmod(dir, 0o755)
  const accounts = await mkdtemp('/tmp/sbt-accounts-')
  await mkdir(path.join(accounts, 'etc'))
  await writeFile(
    path.join(accounts, 'etc/passwd'),
    `root:x:0:0:root:${dir}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  )
  await writeFile(path.join(accounts, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n')
  const state = new EnvdState({ E2B_SANDBOX: 'true' })
  const users = new UserDirectory(accounts)
  const ctx: EnvdContext = {
    state,
    users,
    logger: pino({ level: 'silent' }),
    runAs: await testRunAs(),
  }
  const service = createFilesystemService(ctx)
  const client = createClient(
    Filesystem,
    createRouterTransport((router) => router.service(Filesystem, service)),
  )
  const dispose = async (): Promise<void> => {
    await rm(dir, { recursive: true, force: true })
    await rm(accounts, { recursive: true, force: true })
  }
  return { client, dir, dispose }
}
