import type { ServiceImpl } from '@connectrpc/connect'
import type { EnvdContext } from '../context.js'
import type { Process } from '../gen/process/process_pb.js'

// PLACEHOLDER — replaced by the process helper.
export function createProcessService(_ctx: EnvdContext): Partial<ServiceImpl<typeof Process>> {
  return {}
}
