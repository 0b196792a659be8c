import { mkdtemp, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { AgentError } from '../../../src/agent/errors.js'
import { runHostCommand } from '../../../src/agent/host-command.js'

describe('runHostCommand', () => {
  it('answers the tool’s stdout, given its input and extra environment', async () => {
    const out = await runHostCommand('sh', ['-c', 'tr a-z A-Z; echo "$EXTRA"'], {
      input: 'through stdin\n',
      env: { EXTRA: 'extra' },
    })
    expect(out).toBe('THROUGH STDIN\nextra\n')
  })

  it('fails with the tool’s exit code and stderr', async () => {
    const failure = runHostCommand('sh', ['-c', 'echo partial; echo broken >&2; exit 4'])
    await expect(failure).rejects.toBeInstanceOf(AgentError)
    await expect(failure).rejects.toMatchObject({
      message: 'sh -c echo partial; echo broken >&2; exit 4 failed: broken',
      exitCode: 4,
    })
  })

  it('fails naming a tool that cannot start', async () => {
    await expect(runHostCommand('sbt-no-such-tool', [])).rejects.toMatchObject({
      message:
        'sbt-no-such-tool could not start: spawn sbt-no-such-tool: No such file or directory',
      exitCode: null,
    })
  })

  it('kills a tool that outlives its timeout', async () => {
    const started = performance.now()
    await expect(runHostCommand('sleep', ['10'], { timeoutMs: 100 })).rejects.toMatchObject({
      message: 'sleep 10 failed: killed after 100 ms',
      exitCode: null,
    })
    expect(performance.now() - started).toBeLessThan(5000)
  })

  it('appends to an output file, whose text is a failure’s stderr, in the given cwd', async () => {
    const dir = await mkdtemp('/tmp/sbt-host-command-')
    try {
      const log = path.join(dir, 'tool.log')
      await runHostCommand('sh', ['-c', 'pwd'], { outputFile: log, cwd: dir })
      const failure = runHostCommand('sh', ['-c', 'echo gone >&2; exit 1'], { outputFile: log })
      await expect(failure).rejects.toMatchObject({ stderr: `${dir}\ngone\n`, exitCode: 1 })
      expect(await readFile(log, 'utf8')).toBe(`${dir}\ngone\n`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('passes each line to onLine as it comes, from stdout and stderr', async () => {
    const lines: string[] = []
    await runHostCommand('sh', ['-c', 'echo one; echo two >&2'], {
      onLine: (line) => lines.push(line),
    })
    expect(lines.sort()).toEqual(['one', 'two'])
  })
})
