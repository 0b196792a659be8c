import * as z from 'zod/mini'
import type { SandboxLifecycle, SandboxNetwork } from './index.js'

const stringMap = z.record(z.string(), z.string())

const network = z.object({
  allowOut: z.array(z.string()),
  denyOut: z.array(z.string()),
  allowPublicTraffic: z.boolean(),
  maskRequestHost: z.optional(z.string()),
})

const lifecycle = z.object({
  onTimeout: z.enum(['kill', 'pause']),
  autoResume: z.boolean(),
  keepMemory: z.boolean(),
})

/**
 * JSON columns are text on both dialects (schema.ts); these decode them, so a row edited by
 * hand or written by a newer version fails loudly here instead of deep inside a route.
 */
export const jsonColumns = {
  stringMap: (text: string): Record<string, string> => stringMap.parse(JSON.parse(text)),
  network: (text: string): SandboxNetwork => network.parse(JSON.parse(text)),
  lifecycle: (text: string): SandboxLifecycle => lifecycle.parse(JSON.parse(text)),
}
