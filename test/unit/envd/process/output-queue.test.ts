import { describe, expect, it } from 'vitest'
import { exitStatus } from '../../../../src/envd/process/exit-status.js'
import { OutputQueue } from '../../../../src/envd/process/output-queue.js'
import { ProcessOutput } from '../../../../src/envd/process/process-output.js'

const never = new AbortController().signal

describe('ProcessOutput and OutputQueue', () => {
  it('splits output into chunks, keeps nothing for absent subscribers, and ends once', async () => {
    const output = new ProcessOutput(4)
    output.publish('stdout', new TextEncoder().encode('dropped'))
    const queue = new OutputQueue(output)
    output.publish('stdout', new TextEncoder().encode('abcdefghij'))
    output.finish(exitStatus({ code: 0 }))
    output.publish('stderr', new TextEncoder().encode('after the end'))
    const seen: string[] = []
    for (;;) {
      const next = await queue.next(1000, never)
      if (typeof next === 'string') throw new Error(`unexpected ${next}`)
      if (next.case === 'end') break
      seen.push(new TextDecoder().decode(next.chunk))
    }
    expect(seen).toEqual(['abcd', 'efgh', 'ij'])
  })

  it('gives a late subscriber the end straight away', async () => {
    const output = new ProcessOutput(1024)
    output.finish(exitStatus({ signal: 9 }))
    const next = await new OutputQueue(output).next(1000, never)
    expect(next).toEqual({ case: 'end', status: exitStatus({ signal: 9 }) })
  })

  it('reports idle after the keepalive interval and aborted once the signal fires', async () => {
    const queue = new OutputQueue(new ProcessOutput(1024))
    expect(await queue.next(20, never)).toBe('idle')
    const controller = new AbortController()
    const pending = queue.next(60_000, controller.signal)
    controller.abort()
    expect(await pending).toBe('aborted')
  })

  it('pauses reading while a subscriber is far behind and resumes once it catches up', async () => {
    const output = new ProcessOutput(32 * 1024)
    const flow: string[] = []
    output.attachFlow({ pause: () => flow.push('pause'), resume: () => flow.push('resume') })
    const queue = new OutputQueue(output)
    for (let i = 0; i < 40; i++) output.publish('stdout', new Uint8Array(32 * 1024))
    expect(flow).toEqual(['pause'])
    for (let i = 0; i < 40; i++) await queue.next(1000, never)
    expect(flow).toEqual(['pause', 'resume'])
    for (let i = 0; i < 40; i++) output.publish('stdout', new Uint8Array(32 * 1024))
    queue.close()
    expect(flow).toEqual(['pause', 'resume', 'pause', 'resume'])
  })
})
