import * as z from 'zod/mini'
import type {
  BuildFailure,
  BuildResult,
  SandboxLifecycle,
  SandboxNetwork,
  SandboxVolumeMount,
} from './index.js'

const stringMap = z.record(z.string(), z.string())

const stringList = z.array(z.string())

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

const buildResult = z.object({
  layers: stringList,
  cacheLayers: z.optional(stringList),
  defaultUser: z.string(),
  defaultWorkdir: z.string(),
  envVars: stringMap,
  startCmd: z.optional(z.string()),
  readyCmd: z.optional(z.string()),
  snapshot: z.optional(z.object({ sourceSandboxID: z.string() })),
})

const volumeMounts = z.array(z.object({ volumeID: z.string(), name: z.string(), path: z.string() }))

const buildFailure = z.object({ message: z.string(), step: z.optional(z.string()) })

/**
 * JSON columns are text on both dialects (schema.ts); these decode them, so a row edited by
 * hand or written by a newer version fails loudly here instead of deep inside a route.
 */
export const jsonColumns = {
  stringMap: (text: string): Record<string, string> => stringMap.parse(JSON.parse(text)),
  network: (text: string): SandboxNetwork => network.parse(JSON.parse(text)),
  lifecycle: (text: string): SandboxLifecycle => lifecycle.parse(JSON.parse(text)),
  stringList: (text: string): string[] => stringList.parse(JSON.parse(text)),
  buildResult: (text: string): BuildResult => buildResult.parse(JSON.parse(text)),
  buildFailure: (text: string): BuildFailure => buildFailure.parse(JSON.parse(text)),
  volumeMounts: (text: string): SandboxVolumeMount[] => volumeMounts.parse(JSON.parse(text)),
}
