import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

/** The `sandbar` command from source, as `bin/sandbar` runs the bundle. */
async function sandbar(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['src/cli/main.ts', ...args],
      { timeout: 30_000 },
    )
    return { code: 0, stdout, stderr }
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string }
    return { code, stdout, stderr }
  }
}

describe('sandbar command line', () => {
  it('prints the usage for --help and exits 0', async () => {
    const { code, stdout } = await sandbar('serve', '--help')
    expect(code).toBe(0)
    expect(stdout).toContain('serve [--data-dir DIR]')
  })

  it('names an unknown flag, shows the usage and exits 2, without a stack trace', async () => {
    const { code, stderr } = await sandbar('serve', '--bogus')
    expect(code).toBe(2)
    expect(stderr).toMatch(/^sandbar serve: Unknown option '--bogus'/)
    expect(stderr).toContain('usage: sandbar <command>')
    expect(stderr).not.toContain('    at ')
  })

  it('rejects a bad port before touching anything', async () => {
    const { code, stderr } = await sandbar(
      'serve',
      '--api-port',
      'x',
      '--data-dir',
      '/nonexistent/x',
    )
    expect(code).toBe(2)
    expect(stderr).toMatch(/^sandbar serve: invalid port 'x'/)
    expect(existsSync('/nonexistent')).toBe(false)
  })

  it('names the runtimes it can run sandboxes on', async () => {
    const { code, stderr } = await sandbar('serve', '--runtime', 'docker')
    expect(code).toBe(2)
    expect(stderr).toMatch(
      /^sandbar serve: invalid --runtime 'docker' \(one of crun, runc, runsc\)/,
    )
  })

  it('documents --log-format and names the formats it takes', async () => {
    const help = await sandbar('serve', '--help')
    expect(help.stdout).toContain('--log-format pretty|json')
    const { code, stderr } = await sandbar('serve', '--log-format', 'yaml')
    expect(code).toBe(2)
    expect(stderr).toMatch(/^sandbar serve: invalid --log-format 'yaml' \(one of pretty, json\)/)
  })

  it('documents the volume flags and refuses sizes out of range', async () => {
    const help = await sandbar('serve', '--help')
    expect(help.stdout).toContain('--volume-size-mb MiB')
    expect(help.stdout).toContain('--volume-token-ttl SECONDS')
    for (const size of ['8', '2000000', 'big']) {
      const { code, stderr } = await sandbar('serve', '--volume-size-mb', size)
      expect(code).toBe(2)
      expect(stderr).toMatch(
        new RegExp(`^sandbar serve: invalid --volume-size-mb '${size}' \\(16 to 1048576\\)`),
      )
    }
    const ttl = await sandbar('serve', '--volume-token-ttl', '0')
    expect(ttl.stderr).toMatch(/^sandbar serve: invalid --volume-token-ttl '0'/)
  })
})
