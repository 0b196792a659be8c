import * as z from 'zod/mini'
import type { LogLevel } from './index.js'

const LEVELS = ['debug', 'info', 'warn', 'error'] as const

/** A stored level column, checked on the way out. */
export const logLevel = z.enum(LEVELS)

/** The levels at or above `lowest` (wire contract §1.3 `LogLevel`, lowest first). */
export function levelsFrom(lowest: LogLevel): LogLevel[] {
  return LEVELS.slice(LEVELS.indexOf(lowest))
}
