import type { Logger } from '../logger.js'
import type { EnvdState } from './state.js'
import type { UserDirectory } from './users.js'

/**
 * What every envd service and route is given: configuration state, accounts, a logger, and how
 * user processes drop to their user.
 */
export interface EnvdContext {
  state: EnvdState
  users: UserDirectory
  logger: Logger
  /** The run-as helper user processes start through, resolved once at envd start (`runAsPath`). */
  runAs: string
}
