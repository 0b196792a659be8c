import type { ServiceImpl } from '@connectrpc/connect'
import type { EnvdContext } from '../context.js'
import type { Filesystem } from '../gen/filesystem/filesystem_pb.js'

// PLACEHOLDER — replaced by the filesystem helper.
export function createFilesystemService(
  _ctx: EnvdContext,
): Partial<ServiceImpl<typeof Filesystem>> {
  return {}
}
