import type { Logger } from '../logger.js'
import type { EnvdState } from './state.js'
import type { UserDirectory } from './users.js'

/** What every envd service and route is given: configuration state, accounts and a logger. */
export interface EnvdContext {
  state: EnvdState
  users: UserDirectory
  logger: Logger
}
