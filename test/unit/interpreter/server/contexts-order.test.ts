import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import type { WorkerCommand } from '../../../../src/interpreter/index.js'
import { Contexts } from '../../../../src/interpreter/server/contexts.js'

/**
 * A worker that is ready after `delayMs` and answers every request `ok`: which of two workers
 * comes up first is a race real workers cannot be made to lose on demand.
 */
function slowWorker(delayMs: number): WorkerCommand {
  const script = `
    const lines = require('node:readline').createInterface({ input: process.stdin })
    lines.on('line', (line) => {
      const { id } = JSON.parse(line)
      process.stdout.write(JSON.stringify({ id, type: 'done', status: 'ok' }) + '\\n')
    })
    setTimeout(() => process.stdout.write('{"type":"ready"}\\n'), ${delayMs})
  `
  return { command: process.execPath, args: ['-e', script] }
}

let contexts: Contexts | undefined

afterEach(async () => {
  await contexts?.closeAll()
})

describe('Contexts (wire contract §1.7)', () => {
  it('lists contexts made at once in the order they were asked for, not as they came up', async () => {
    const delays: Record<string, number> = { python: 400, javascript: 0 }
    contexts = new Contexts(
      (language) => slowWorker(delays[language] ?? 0),
      pino({ level: 'silent' }),
      '/tmp',
    )
    const created = contexts
    await Promise.all(['python', 'javascript'].map((language) => created.defaultFor(language)))
    expect(created.list().map((context) => context.language)).toEqual(['python', 'javascript'])
    const later = await created.create('javascript', '/tmp')
    expect(created.list().at(-1)).toBe(later)
  })
})
