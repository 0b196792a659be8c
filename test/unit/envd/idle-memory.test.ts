import { createServer } from 'node:http'
import { getHeapStatistics } from 'node:v8'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  collectAllGarbage,
  collectWhenIdle,
  IDLE_MS,
  MIN_GAP_MS,
  MIN_REQUESTS,
} from '../../../src/envd/idle-memory.js'
import { createLogger } from '../../../src/logger.js'

describe('collectWhenIdle', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  function watched() {
    const server = createServer()
    const collect = vi.fn(async () => undefined)
    const stop = collectWhenIdle(server, collect)
    const request = () => server.emit('request')
    const busySpell = () => {
      for (let i = 0; i < MIN_REQUESTS; i++) request()
    }
    return { request, busySpell, collect, stop }
  }

  it('collects once, a quiet spell after a busy one, and never after a few requests', () => {
    const { request, busySpell, collect, stop } = watched()
    vi.advanceTimersByTime(10 * IDLE_MS)
    for (let i = 0; i < MIN_REQUESTS - 1; i++) request()
    vi.advanceTimersByTime(10 * MIN_GAP_MS)
    expect(collect).not.toHaveBeenCalled()
    busySpell()
    vi.advanceTimersByTime(IDLE_MS - 1)
    expect(collect).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(collect).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(10 * MIN_GAP_MS)
    expect(collect).toHaveBeenCalledTimes(1)
    stop()
  })

  it('waits while requests keep coming', () => {
    const { request, collect, stop } = watched()
    for (let i = 0; i < 2 * MIN_REQUESTS; i++) {
      request()
      vi.advanceTimersByTime(IDLE_MS / 2)
    }
    expect(collect).not.toHaveBeenCalled()
    vi.advanceTimersByTime(IDLE_MS / 2)
    expect(collect).toHaveBeenCalledTimes(1)
    stop()
  })

  it('collects at most once per gap, however often busy spells end', () => {
    const { busySpell, collect, stop } = watched()
    busySpell()
    vi.advanceTimersByTime(IDLE_MS)
    expect(collect).toHaveBeenCalledTimes(1)
    busySpell()
    vi.advanceTimersByTime(MIN_GAP_MS - IDLE_MS - 1)
    expect(collect).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(IDLE_MS + 1)
    expect(collect).toHaveBeenCalledTimes(2)
    stop()
  })

  it('does nothing once stopped', () => {
    const { busySpell, collect, stop } = watched()
    busySpell()
    stop()
    busySpell()
    vi.advanceTimersByTime(MIN_GAP_MS)
    expect(collect).not.toHaveBeenCalled()
  })
})

describe('collectAllGarbage', () => {
  it('frees what nothing references any more', async () => {
    let garbage: string[] | undefined = Array.from({ length: 200_000 }, (_, i) => `item ${i}`)
    const before = getHeapStatistics().used_heap_size
    expect(garbage.length).toBe(200_000)
    garbage = undefined
    await collectAllGarbage(createLogger('test'))
    expect(getHeapStatistics().used_heap_size).toBeLessThan(before - 5 * 1024 * 1024)
  })
})
