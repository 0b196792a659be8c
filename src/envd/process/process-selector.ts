import { Code, ConnectError } from '@connectrpc/connect'
import type { ProcessSelector } from '../gen/process/process_pb.js'
import type { ManagedProcess } from './managed-process.js'
import type { ProcessRegistry } from './process-registry.js'

/**
 * The process a `ProcessSelector` names, by pid or tag. `Connect` also reaches a process that
 * ended in the last 30 s (`includeEnded`); input, signals and resizes only reach running ones.
 * Unknown → `not_found` with the contract's text (wire contract §3.5).
 */
export function selectProcess(
  registry: ProcessRegistry,
  selector: ProcessSelector | undefined,
  { includeEnded = false } = {},
): ManagedProcess {
  const choice = selector?.selector
  if (choice === undefined || choice.case === undefined) {
    throw new ConnectError('process selector is required', Code.InvalidArgument)
  }
  const found = choice.case === 'pid' ? registry.byPid(choice.value) : registry.byTag(choice.value)
  if (found !== undefined && (includeEnded || found.output.end === undefined)) return found
  throw new ConnectError(`process with ${choice.case} ${choice.value} not found`, Code.NotFound)
}
