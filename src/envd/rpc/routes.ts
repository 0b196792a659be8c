import type { ConnectRouter } from '@connectrpc/connect'
import type { EnvdContext } from '../context.js'
import { Filesystem } from '../gen/filesystem/filesystem_pb.js'
import { Process } from '../gen/process/process_pb.js'
import { createFilesystemService } from './filesystem-service.js'
import { createProcessService } from './process-service.js'

/** Registers envd's two Connect services: `filesystem.Filesystem` and `process.Process`. */
export function registerRpcRoutes(ctx: EnvdContext): (router: ConnectRouter) => void {
  const filesystem = createFilesystemService(ctx)
  const process = createProcessService(ctx)
  return (router) => {
    router.service(Filesystem, filesystem)
    router.service(Process, process)
  }
}
