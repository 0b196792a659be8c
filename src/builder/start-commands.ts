import type { BuildResult } from '../store/index.js'
import type { BuildRequest } from './index.js'

/**
 * The start and ready commands a build gives its template (wire contract §2.5). A build from
 * another template that sets neither keeps its base's, as E2B's finalize phase does: a template
 * made `fromTemplate('code-interpreter-v1')` still starts the interpreter server.
 */
export function startCommands(request: BuildRequest): Pick<BuildResult, 'startCmd' | 'readyCmd'> {
  const { startCmd, readyCmd, base } = request
  if (startCmd !== undefined || readyCmd !== undefined || base.kind !== 'template') {
    return { startCmd, readyCmd }
  }
  return { startCmd: base.build.startCmd, readyCmd: base.build.readyCmd }
}
