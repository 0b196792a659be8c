import { closeSync, openSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { type SpawnedProcess, spawnProcess } from '../../../src/spawn/process-spawn.js'

const env = { PATH: '/usr/bin:/bin', GREETING: 'hello' }

function shell(script: string, stdin = false): SpawnedProcess {
  return spawnProcess('/bin/sh', ['-c', script], {
    cwd: '/tmp',
    env,
    stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    newSession: true,
  })
}

async function text(stream: SpawnedProcess['stdout']): Promise<string> {
  let data = ''
  for await (const chunk of stream ?? []) data += String(chunk)
  return data
}

describe('spawnProcess', () => {
  it('runs the program in its cwd with exactly its env, and reports its exit code', async () => {
    const child = shell('echo "$GREETING from $(pwd)"; env | sort; echo oops >&2; exit 3')
    const [stdout, stderr, exit] = await Promise.all([
      text(child.stdout),
      text(child.stderr),
      child.exited,
    ])
    expect(stdout).toBe('hello from /tmp\nGREETING=hello\nPATH=/usr/bin:/bin\nPWD=/tmp\n')
    expect(stderr).toBe('oops\n')
    expect(exit).toEqual({ code: 3 })
    expect(child.stdin).toBeNull()
  })

  it('leads a session of its own, so its whole group can be signalled', async () => {
    const child = shell('sleep 30 & echo "$(ps -o pgid= -p $$) $(ps -o sid= -p $$)"; wait')
    const line = await new Promise<string>((resolve) =>
      child.stdout?.once('data', (chunk) => resolve(String(chunk))),
    )
    expect(line.trim().split(/\s+/)).toEqual([String(child.pid), String(child.pid)])
    process.kill(-child.pid, 'SIGKILL')
    expect(await child.exited).toEqual({ signal: 9 })
  })

  it('pipes stdin when asked, and gives /dev/null otherwise', async () => {
    const piped = shell('cat', true)
    piped.stdin?.end('through the pipe')
    expect(await text(piped.stdout)).toBe('through the pipe')
    const closed = shell('cat; echo "read $?"')
    expect(await text(closed.stdout)).toBe('read 0\n')
  })

  it('names the program it could not start, and leaves no descriptor open', async () => {
    const before = (await readdir('/proc/self/fd')).length
    // Three pipes a start: a leak would show as dozens of descriptors.
    for (let attempt = 0; attempt < 10; attempt++) {
      expect(() =>
        spawnProcess('/nonexistent/program', [], { env, stdio: ['pipe', 'pipe', 'pipe'] }),
      ).toThrow('spawn /nonexistent/program: No such file or directory')
      expect(() =>
        spawnProcess('/bin/true', [], {
          cwd: '/nonexistent',
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
        }),
      ).toThrow('No such file or directory')
    }
    expect((await readdir('/proc/self/fd')).length).toBeLessThanOrEqual(before)
  })

  it('lets envd’s event loop run while children run, and reaps each one', async () => {
    const children = Array.from({ length: 20 }, (_, i) => shell(`exit ${i}`))
    const exits = await Promise.all(children.map((child) => child.exited))
    expect(exits).toEqual(children.map((_, i) => ({ code: i })))
    for (const child of children) {
      // Reaped: no zombie is left under envd's pid.
      await expect(readdir(`/proc/${child.pid}`)).rejects.toThrow('ENOENT')
    }
  })

  it('searches PATH for a bare name, and hands given descriptors over at their slots', async () => {
    const file = path.join(await mkdtemp('/tmp/sbt-spawn-'), 'input')
    try {
      await writeFile(file, 'from a file')
      const input = openSync(file, 'r')
      const extra = openSync(file, 'r')
      const script = `cat; printf '|'; cat <&3; printf '|%s|%s' $$ "$(ps -o sid= -p $$ | tr -d ' ')"`
      const child = spawnProcess('sh', ['-c', script], {
        env,
        stdio: [input, 'pipe', 'ignore', extra],
      })
      closeSync(input)
      closeSync(extra)
      const [stdout, exit] = await Promise.all([text(child.stdout), child.exited])
      expect(exit).toEqual({ code: 0 })
      expect(child.stdin).toBeNull()
      expect(child.stderr).toBeNull()
      const [fromStdin, fromSlot3, pid, sid] = stdout.split('|')
      expect([fromStdin, fromSlot3, pid]).toEqual(['from a file', 'from a file', String(child.pid)])
      // Without newSession it stays in the caller's session.
      expect(sid).not.toBe(String(child.pid))
    } finally {
      await rm(path.dirname(file), { recursive: true, force: true })
    }
  })

  it('gives each slot its own source, even one numbered like another slot', async () => {
    // Slot 1 gets a pipe, slot 2 the caller's own fd 1: placing the pipe at 1 first must not
    // turn slot 2 into the pipe as well. The child's stderr lands on the test's stdout.
    const child = spawnProcess(
      'sh',
      ['-c', 'echo out; echo "slot 2 kept the caller\'s fd 1" >&2'],
      {
        env,
        stdio: ['ignore', 'pipe', 1],
      },
    )
    const [stdout, exit] = await Promise.all([text(child.stdout), child.exited])
    expect(exit).toEqual({ code: 0 })
    expect(stdout).toBe('out\n')
  })
})
