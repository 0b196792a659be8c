import { describe, expect, it } from 'vitest'
import { NftScriptQueue } from '../../../../src/agent/network/nft-script-queue.js'

/** Records each run's script; a run fails when its script contains `bad`. */
function recordingRunner() {
  const runs: string[] = []
  let running = 0
  let overlapped = false
  const run = async (script: string) => {
    running += 1
    overlapped ||= running > 1
    runs.push(script)
    await new Promise((resolve) => setTimeout(resolve, 5))
    running -= 1
    if (script.includes('bad')) throw new Error(`nft refused: ${script.trim()}`)
  }
  return { runs, run, overlapped: () => overlapped }
}

describe('nft script queue', () => {
  it('runs one script at a time, joining those that waited into one run, in order', async () => {
    const runner = recordingRunner()
    const queue = new NftScriptQueue(runner.run)
    await Promise.all(['a\n', 'b\n', 'c\n', 'd\n'].map((script) => queue.apply(script)))
    expect(runner.runs).toEqual(['a\n', 'b\nc\nd\n'])
    expect(runner.overlapped()).toBe(false)
  })

  it("gives each caller its own script's outcome when a joined run fails", async () => {
    const runner = recordingRunner()
    const queue = new NftScriptQueue(runner.run)
    const outcomes = await Promise.allSettled(
      ['first\n', 'good\n', 'bad\n', 'fine\n'].map((script) => queue.apply(script)),
    )
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ])
    expect(outcomes[2]).toMatchObject({ reason: new Error('nft refused: bad') })
    expect(runner.runs).toEqual(['first\n', 'good\nbad\nfine\n', 'good\n', 'bad\n', 'fine\n'])
  })

  it('keeps working after a failure', async () => {
    const runner = recordingRunner()
    const queue = new NftScriptQueue(runner.run)
    await expect(queue.apply('bad\n')).rejects.toThrow('nft refused: bad')
    await queue.apply('after\n')
    expect(runner.runs).toEqual(['bad\n', 'after\n'])
  })
})
