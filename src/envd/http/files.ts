import type { Hono } from 'hono'
import type { EnvdContext } from '../context.js'

// PLACEHOLDER — replaced by the files helper.
export function registerFileRoutes(_app: Hono, _ctx: EnvdContext): void {}
