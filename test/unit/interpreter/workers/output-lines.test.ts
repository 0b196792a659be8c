import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { OutputLines } from '../../../../src/interpreter/workers/output-lines.js'

describe('OutputLines', () => {
  let sent: string[]
  let lines: OutputLines

  beforeEach(() => {
    vi.useFakeTimers()
    sent = []
    lines = new OutputLines((text) => sent.push(text), 50)
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('sends a line written in pieces as one text', () => {
    lines.write('[1]')
    lines.write(' "two"\n')
    expect(sent).toEqual(['[1] "two"\n'])
  })

  it('sends whole lines at once and keeps the start of the next', () => {
    lines.write('one\ntwo\nthr')
    expect(sent).toEqual(['one\ntwo\n'])
    lines.write('ee\n')
    expect(sent).toEqual(['one\ntwo\n', 'three\n'])
  })

  it('sends the start of a line alone once no more output came for the wait', () => {
    lines.write('Progress: ')
    vi.advanceTimersByTime(49)
    expect(sent).toEqual([])
    lines.write('10%')
    vi.advanceTimersByTime(49)
    expect(sent).toEqual([])
    vi.advanceTimersByTime(1)
    expect(sent).toEqual(['Progress: 10%'])
    vi.advanceTimersByTime(1000)
    expect(sent).toEqual(['Progress: 10%'])
  })

  it('sends what waits on flush, and nothing when nothing waits', () => {
    lines.flush()
    lines.write('no newline')
    lines.flush()
    lines.flush()
    vi.advanceTimersByTime(1000)
    expect(sent).toEqual(['no newline'])
  })
})
