import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { Sandbox, Template, waitForPort } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi, clientEnvVariables } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Templates beyond one build (issue 11): package installs in build steps, the `e2b` CLI, and a
// service killed in the middle of a build. Build sandboxes alone may reach the package
// registries (--masquerade-builds); every other sandbox stays off the network.

let serve: ServeInstance
let home = ''
const opts = () => ({ ...serve.client })
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt'
const uniqueName = (what: string) => `sbt-${what}-${randomBytes(3).toString('hex')}`

beforeAll(async () => {
  // This machine's traffic passes a TLS-intercepting proxy whose authority the host trusts.
  serve = await startServe(['--masquerade-builds', '--build-ca-file', HOST_CA_BUNDLE])
  home = await mkdtemp('/tmp/sbt-cli-home-')
})

afterAll(async () => {
  await rm(home, { recursive: true, force: true })
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

describe('package installs in build steps', () => {
  it('installs Debian and npm packages into the template', async () => {
    const name = uniqueName('packages')
    await Template.build(
      Template().fromBaseImage().aptInstall(['jq']).npmInstall(['left-pad@1.3.0'], { g: true }),
      name,
      { ...opts(), cpuCount: 1, memoryMB: 1024 },
    )
    const sandbox = await Sandbox.create(name, opts())
    try {
      const result = await sandbox.commands.run(
        `echo '{"a":41}' | jq '.a + 1' && node -e "console.log(require('$(npm root -g)/left-pad')('x', 3, '.'))"`,
      )
      expect(result.stdout).toBe('42\n..x\n')
      // The build's certificate authorities stayed with the build.
      const ca = await sandbox.commands.run(
        'printenv NODE_EXTRA_CA_CERTS || echo none; ls /tmp/.sandbar-build-ca.pem 2>/dev/null || echo absent',
      )
      expect(ca.stdout).toBe('none\nabsent\n')
      // The template's sandboxes are no build: they reach nothing outside.
      const offline = await sandbox.commands.run(
        'curl -s -m 3 -o /dev/null -w "%{http_code}" http://deb.debian.org/ || echo unreachable',
      )
      expect(offline.stdout).toContain('unreachable')
    } finally {
      await sandbox.kill()
    }
  })
})

describe('the e2b CLI', () => {
  it('builds a template from a Dockerfile with `e2b template create`', async () => {
    const name = uniqueName('cli')
    const dir = await mkdtemp('/tmp/sbt-cli-project-')
    try {
      await writeFile(
        path.join(dir, 'e2b.Dockerfile'),
        ['FROM e2bdev/base', 'RUN echo "from the cli" > /home/user/hello.txt'].join('\n'),
      )
      const cli = path.resolve('node_modules/@e2b/cli/dist/index.js')
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          cli,
          ...['template', 'create', name, '--path', dir, '--cpu-count', '1', '--memory-mb', '512'],
          ...['--cmd', 'python3 -m http.server 8080', '--ready-cmd', waitForPort(8080).getCmd()],
        ],
        {
          // As a user runs it: client.env alone points it at Sandbar (domain, key and the
          // certificate authority of Sandbar's TLS).
          env: { PATH: process.env.PATH, HOME: home, ...clientEnvVariables(serve.clientEnvText) },
          timeout: 300_000,
        },
      )
      expect(stdout).toMatch(/Template is ready|Build finished|built/i)
      const sandbox = await Sandbox.create(name, opts())
      try {
        const result = await sandbox.commands.run(
          'cat /home/user/hello.txt && curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8080/',
        )
        expect(result.stdout).toBe('from the cli\n200')
      } finally {
        await sandbox.kill()
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('a service killed mid-build', () => {
  it('fails the interrupted build and still serves the previous one, leaving nothing behind', async () => {
    const name = uniqueName('crash')
    await Template.build(Template().fromBaseImage().runCmd('echo first > /tmp/which'), name, {
      ...opts(),
      cpuCount: 1,
      memoryMB: 512,
    })
    const second = await Template.buildInBackground(
      Template().fromBaseImage().runCmd('echo second > /tmp/which && sleep 120'),
      name,
      { ...opts(), cpuCount: 1, memoryMB: 512 },
    )
    const statusPath = `/templates/${second.templateId}/builds/${second.buildId}/status`
    await expect
      .poll(async () => (await callApi(serve.client, 'GET', statusPath)).body?.status, {
        timeout: 60_000,
      })
      .toBe('building')
    // Let the step's sandbox start its command before the kill.
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    await serve.crashAndRestart()
    const status = await callApi(serve.client, 'GET', statusPath)
    expect(status.body).toMatchObject({ status: 'error', reason: { message: expect.any(String) } })
    const sandbox = await Sandbox.create(name, opts())
    try {
      expect((await sandbox.commands.run('cat /tmp/which')).stdout).toBe('first\n')
    } finally {
      await sandbox.kill()
    }
  })
})
