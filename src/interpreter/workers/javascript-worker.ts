import { builtinModules, createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { inspect } from 'node:util'
import vm from 'node:vm'
import { cellScript } from './javascript-cell.js'
import { protocolEmitter, serveRequests, timestamp } from './worker-protocol.js'

class Interrupted extends Error {
  override name = 'Interrupted'
}

/** Loads a module as `import` would from the cwd: built-ins, then packages and files. */
async function importFromCwd(specifier: string): Promise<unknown> {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return import(specifier)
  const resolved = createRequire(path.join(process.cwd(), 'index.js')).resolve(specifier)
  return import(pathToFileURL(resolved).href)
}

/**
 * The javascript and typescript worker: cells run in this process's own realm (so `process`,
 * `fetch`, `Buffer` are there as in a script), with user writes to stdout and stderr turned
 * into events. SIGINT breaks synchronous code (`breakOnSigint`) and abandons a pending await.
 */
export function runJavascriptWorker(options: { typescript: boolean }): void {
  const emit = protocolEmitter()
  let currentId = 0
  const capture =
    (stream: 'stdout' | 'stderr') =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()
      emit({ id: currentId, type: stream, text, timestamp: timestamp() })
      const callback = rest.find((arg) => typeof arg === 'function')
      if (typeof callback === 'function') callback()
      return true
    }
  process.stdout.write = capture('stdout') as typeof process.stdout.write
  process.stderr.write = capture('stderr') as typeof process.stderr.write
  Object.assign(globalThis, { __sandbar_import: importFromCwd })

  let interrupt: ((error: Error) => void) | undefined
  process.on('SIGINT', () => interrupt?.(new Interrupted('Execution was interrupted')))

  let executionCount = 0
  serveRequests(async ({ id, code, silent }) => {
    currentId = id
    if (!silent) {
      executionCount += 1
      emit({ id, type: 'number_of_executions', execution_count: executionCount })
    }
    const interrupted = new Promise<never>((_, reject) => {
      interrupt = reject
    })
    try {
      Object.assign(globalThis, { require: createRequire(path.join(process.cwd(), 'index.js')) })
      const script = new vm.Script(cellScript(code, options.typescript), {
        filename: `cell-${executionCount}`,
      })
      const value = await Promise.race([
        script.runInThisContext({ breakOnSigint: true }) as Promise<unknown>,
        interrupted,
      ])
      if (value !== undefined && !silent) {
        emit({ id, type: 'result', bundle: { 'text/plain': inspect(value) }, is_main_result: true })
      }
      emit({ id, type: 'done', status: 'ok' })
    } catch (error) {
      emit({ id, type: 'error', ...errorFields(error) })
      emit({ id, type: 'done', status: 'error' })
    } finally {
      interrupt = undefined
    }
  })
  emit({ type: 'ready' })
}

function errorFields(error: unknown): { name: string; value: string; traceback: string } {
  if (error instanceof Error) {
    const interrupted = (error as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED'
    return {
      name: interrupted ? 'Interrupted' : error.name,
      value: error.message,
      traceback: error.stack ?? `${error.name}: ${error.message}`,
    }
  }
  return { name: 'Error', value: String(error), traceback: String(error) }
}
