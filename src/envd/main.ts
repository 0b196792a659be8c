import { useLightFetchHeaders } from './fetch-headers.js'
import { runEnvdCommand } from './start-envd.js'

// Before anything builds a Headers: Node's own would load all of undici (fetch-headers.ts).
useLightFetchHeaders()

/**
 * Entry point of envd's bundle (dist/envd/bundle.cjs, which envd.cjs runs; see
 * code-cache-loader.ts). Settles once envd listens, which is when the build writes the cache.
 */
export const started = runEnvdCommand(process.argv.slice(2))
