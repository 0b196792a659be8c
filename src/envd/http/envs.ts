import type { EnvdContext } from '../context.js'
import type { HttpExchange } from './http-exchange.js'

/** `GET /envs`: the default env vars a new process inherits. */
export function envsRoute(ctx: EnvdContext): (exchange: HttpExchange) => void {
  return (exchange) => exchange.json(ctx.state.defaultEnv())
}
