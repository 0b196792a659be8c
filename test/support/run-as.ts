import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, readFile, rename } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { pathExists } from '../../src/agent/path-exists.js'

const repo = fileURLToPath(new URL('../..', import.meta.url))
const source = path.join(repo, 'src/envd/process/run-as.c')

let built: Promise<string> | undefined

/**
 * envd's run-as helper for tests that run envd from source, where no bundle has it beside:
 * compiled as scripts/build.mjs does, once per source version, into node_modules/.cache.
 */
export function testRunAs(): Promise<string> {
  built ??= (async () => {
    const hash = createHash('sha256')
      .update(await readFile(source))
      .digest('hex')
      .slice(0, 16)
    const output = path.join(repo, 'node_modules/.cache/sandbar-test', `run-as-${hash}`)
    if (await pathExists(output)) return output
    await mkdir(path.dirname(output), { recursive: true })
    const temp = `${output}.${process.pid}`
    await promisify(execFile)('cc', ['-O2', '-static', '-o', temp, source])
    await rename(temp, output)
    return output
  })()
  return built
}
