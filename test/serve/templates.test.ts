import { randomBytes } from 'node:crypto'
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { BuildError, type LogEntry, Sandbox, Template, waitForPort } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/** What Template.build takes. */
type TemplateClass = Parameters<typeof Template.build>[0]

import { type ImageRegistry, startImageRegistry } from '../support/image-registry.js'
import { callApi } from '../support/serve-process.js'
import { layeredImage, MUSL_IMAGE, muslImage } from '../support/test-images.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Templates end to end (issue 11): the official SDK's Template() builder against `sandbar
// serve`, base images from a real registry on loopback, and sandboxes of the built templates.

let serve: ServeInstance
let registry: ImageRegistry
let context = ''
const credentials = { username: 'sbt-user', password: randomBytes(12).toString('hex') }
const opts = () => ({ ...serve.client })
/** A template name unique to this run: tests share the cached layers, never names. */
const uniqueName = (what: string) => `sbt-${what}-${randomBytes(3).toString('hex')}`

beforeAll(async () => {
  serve = await startServe()
  registry = await startImageRegistry({ credentials })
  for (const [image, name] of [
    [await muslImage(), 'sbt/musl:1'],
    [await layeredImage(), 'sbt/layered:1'],
  ] as const) {
    await registry.push(image.layout, image.tag, name)
  }
  context = await mkdtemp('/tmp/sbt-template-context-')
  await mkdir(path.join(context, 'app/lib'), { recursive: true })
  await writeFile(path.join(context, 'app/main.py'), 'print("hello from the template")\n')
  await writeFile(path.join(context, 'app/lib/util.py'), 'VALUE = 42\n')
  await symlink('main.py', path.join(context, 'app/entry.py'))
  await writeFile(path.join(context, 'greet.sh'), '#!/bin/sh\necho "greetings, $1"\n')
  await chmod(path.join(context, 'greet.sh'), 0o644)
})

afterAll(async () => {
  await rm(context, { recursive: true, force: true })
  await registry?.stop()
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

/** Builds the template, collecting its log lines; how long the build took. */
async function build(template: TemplateClass, name: string, extra = {}) {
  const logs: LogEntry[] = []
  const started = performance.now()
  const info = await Template.build(template, name, {
    ...opts(),
    cpuCount: 1,
    memoryMB: 512,
    onBuildLogs: (entry) => logs.push(entry),
    ...extra,
  })
  return { info, logs, lines: logs.map((entry) => entry.message), ms: performance.now() - started }
}

/** Makes this run's first build of the app template cold, whatever the shared cache holds. */
const nonce = randomBytes(6).toString('hex')

/** The everyday template: every step kind over the SDK's default base. */
function appTemplate() {
  return Template({ fileContextPath: context })
    .fromBaseImage()
    .runCmd(`echo ${nonce} > /tmp/nonce`)
    .copy('app', '/app/')
    .copy('greet.sh', '/opt/tools/greet', { mode: 0o755 })
    .runCmd('echo "built by $(whoami)" > /tmp/marker && python3 --version > /app/python-version')
    .setEnvs({ GREETING: 'hello' })
    .setEnvs({ DERIVED: '$GREETING world' })
    .setWorkdir('/app')
    .setUser('user')
    .setStartCmd('python3 -m http.server 8000', waitForPort(8000))
}

describe('a template built with the SDK', () => {
  const name = uniqueName('app')
  let first: Awaited<ReturnType<typeof build>>

  beforeAll(async () => {
    first = await build(appTemplate(), `${name}:v1`)
  })

  it("streams the build's phases to onBuildLogs, each with its step", () => {
    const lines = first.lines.join('\n')
    expect(lines).toMatch(/\[base\] FROM e2bdev\/base \[/)
    expect(lines).toMatch(/\[builder 2\/\d+\] COPY app \/app\/ \[[a-z0-9-]+\]/)
    expect(lines).toMatch(/\[builder \d+\/\d+\] RUN echo "built by/)
    expect(lines).toContain('Running start command: python3 -m http.server 8000')
    expect(lines).toContain('Template is ready')
    expect(first.info).toMatchObject({ name: `${name}:v1`, tags: ['v1'] })
  })

  it('gives its sandboxes the files, env, user, workdir, sizes and running start command', async () => {
    const sandbox = await Sandbox.create(`${name}:v1`, opts())
    try {
      const result = await sandbox.commands.run(
        [
          'python3 main.py',
          'python3 -c "import sys; sys.path.insert(0, \\"lib\\"); import util; print(util.VALUE)"',
          'readlink entry.py',
          '/opt/tools/greet you',
          'cat /tmp/marker',
          'echo "$GREETING|$DERIVED|$(whoami)|$(pwd)"',
          'curl -s -o /dev/null -w "%{http_code}\\n" http://127.0.0.1:8000/',
          'stat -c "%U %a" /app/main.py /opt/tools/greet',
        ].join(' && '),
      )
      expect(result.stdout).toBe(
        [
          'hello from the template',
          '42',
          'main.py',
          'greetings, you',
          'built by user',
          'hello|hello world|user|/app',
          '200',
          'user 644',
          'user 755',
          '',
        ].join('\n'),
      )
      const info = await sandbox.getInfo()
      expect(info).toMatchObject({ name, templateId: first.info.templateId })
      const detail = await callApi(serve.client, 'GET', `/sandboxes/${sandbox.sandboxId}`)
      expect(detail.body).toMatchObject({ cpuCount: 1, memoryMB: 512 })
    } finally {
      await sandbox.kill()
    }
  })

  it('rebuilds from the cache: every layer CACHED, and measurably faster', async () => {
    const again = await build(appTemplate(), `${name}:v2`)
    const phases = again.lines.filter((line) => /^(CACHED )?\[(base|builder|finalize)/.test(line))
    expect(phases.length).toBeGreaterThan(5)
    for (const line of phases) expect(line).toMatch(/^CACHED /)
    expect(again.ms).toBeLessThan(first.ms)
    console.log(`cold build ${Math.round(first.ms)} ms, cached rebuild ${Math.round(again.ms)} ms`)
  })

  it('rebuilds every layer with skipCache', async () => {
    const fresh = await build(appTemplate(), `${name}:v3`, { skipCache: true })
    const steps = fresh.lines.filter((line) => /\[builder \d+\/\d+\]/.test(line))
    expect(steps.length).toBeGreaterThan(0)
    for (const line of steps.filter((text) => /\] (RUN|COPY)/.test(text))) {
      expect(line).not.toMatch(/^CACHED /)
    }
  })

  it('is found by Template.exists and carries the tags it was built with', async () => {
    expect(await Template.exists(name, opts())).toBe(true)
    expect(await Template.exists(uniqueName('missing'), opts())).toBe(false)
    await Template.assignTags(`${name}:v1`, ['stable', 'prod'], opts())
    const tags = (await Template.getTags(first.info.templateId, opts())).map((tag) => tag.tag)
    expect(tags).toEqual(expect.arrayContaining(['v1', 'v2', 'v3', 'stable', 'prod']))
    await Template.removeTags(name, 'prod', opts())
    const after = (await Template.getTags(first.info.templateId, opts())).map((tag) => tag.tag)
    expect(after).not.toContain('prod')
    const sandbox = await Sandbox.create(`${name}:stable`, opts())
    await sandbox.kill()
  })

  it('is a base for other templates (fromTemplate), whose start command it keeps', async () => {
    const child = uniqueName('child')
    await build(Template().fromTemplate(`${name}:v1`).runCmd('echo child > /tmp/child'), child)
    const sandbox = await Sandbox.create(child, opts())
    try {
      const result = await sandbox.commands.run(
        'cat /tmp/child /tmp/marker && pwd && whoami && curl -s -o /dev/null -w "%{http_code}\\n" http://127.0.0.1:8000/',
      )
      expect(result.stdout).toBe('child\nbuilt by user\n/app\nuser\n200\n')
    } finally {
      await sandbox.kill()
    }
  })
})

describe('steps without a WORKDIR', () => {
  it("run in the user's home, where relative COPY destinations land", async () => {
    const name = uniqueName('home')
    const template = Template({ fileContextPath: context })
      .fromBaseImage()
      .copy('greet.sh', 'tools/')
      .runCmd('test -f tools/greet.sh && pwd > /tmp/where')
    await build(template, name)
    const sandbox = await Sandbox.create(name, opts())
    try {
      expect((await sandbox.commands.run('cat /tmp/where')).stdout).toBe('/home/user\n')
    } finally {
      await sandbox.kill()
    }
  })
})

describe('templates from a Dockerfile', () => {
  it('builds the steps the SDK translates from it', async () => {
    const name = uniqueName('docker')
    const dockerfile = [
      'FROM e2bdev/base',
      'ARG FLAVOUR=plain',
      'ENV APP_HOME=/srv/app',
      'WORKDIR $APP_HOME',
      'COPY app/main.py .',
      'RUN echo "$FLAVOUR" > flavour && chown -R user:user /srv/app',
      'USER user',
    ].join('\n')
    await build(Template({ fileContextPath: context }).fromDockerfile(dockerfile), name)
    const sandbox = await Sandbox.create(name, opts())
    try {
      const result = await sandbox.commands.run('pwd && cat flavour && python3 main.py && whoami')
      expect(result.stdout).toBe('/srv/app\nplain\nhello from the template\nuser\n')
    } finally {
      await sandbox.kill()
    }
  })
})

describe('templates from registry images', () => {
  it('pulls a private image with credentials and runs steps in it, bash or not', async () => {
    const name = uniqueName('musl')
    const template = Template({ fileContextPath: context })
      .fromImage(`${registry.host}/sbt/musl:1`, credentials)
      .copy('app/main.py', '/srv/main.py')
      .runCmd('echo "made with $(readlink /bin/sh)" > /srv/made')
      .setWorkdir('/srv')
    const { lines } = await build(template, name)
    expect(lines.join('\n')).toMatch(new RegExp(`\\[base\\] FROM ${registry.host}/sbt/musl:1`))
    const sandbox = await Sandbox.create(name, opts())
    try {
      expect(await sandbox.files.read('/srv/made')).toBe('made with busybox\n')
      expect(await sandbox.files.read('/srv/main.py')).toBe('print("hello from the template")\n')
      expect(await sandbox.files.read('/home/user/notes.txt')).toBe(MUSL_IMAGE.notes)
      expect((await sandbox.files.getInfo('/srv/main.py')).owner).toBe('user')
    } finally {
      await sandbox.kill()
    }
  })

  it("is refused without credentials, with the registry's reason in the build log", async () => {
    const template = Template().fromImage(`${registry.host}/sbt/musl:1`).runCmd('true')
    const logs: LogEntry[] = []
    const failure = Template.build(template, uniqueName('denied'), {
      ...opts(),
      onBuildLogs: (entry) => logs.push(entry),
    })
    await expect(failure).rejects.toBeInstanceOf(BuildError)
    await expect(failure).rejects.toThrow(/unauthorized: authentication required/)
    expect(logs.map((entry) => entry.message).join('\n')).toMatch(/authentication required/)
  })

  it('applies the whiteouts of a multi-layer image', async () => {
    const name = uniqueName('layered')
    await build(Template().fromImage(`${registry.host}/sbt/layered:1`, credentials), name)
    const sandbox = await Sandbox.create(name, opts())
    try {
      expect(await sandbox.files.exists('/etc/removed.txt')).toBe(false)
      expect(await sandbox.files.read('/etc/kept.txt')).toBe('kept\n')
      const app = (await sandbox.files.list('/opt/app')).map((entry) => entry.name)
      expect(app).toEqual(['new.txt'])
    } finally {
      await sandbox.kill()
    }
  })
})

describe('build failures', () => {
  it("fails a RUN step with the SDK's BuildError naming the step, its output in the logs", async () => {
    const logs: LogEntry[] = []
    const template = Template()
      .fromBaseImage()
      .runCmd('echo fine')
      .runCmd('echo "about to fail" && exit 7')
    const failure = Template.build(template, uniqueName('fails'), {
      ...opts(),
      onBuildLogs: (entry) => logs.push(entry),
    })
    await expect(failure).rejects.toBeInstanceOf(BuildError)
    await expect(failure).rejects.toThrow(/exited with code 7/)
    expect(logs.map((entry) => entry.message)).toContain('about to fail')
  })

  it('refuses bad names and tags with the contract texts', async () => {
    const bad = await callApi(serve.client, 'POST', '/v3/templates', { name: 'Bad Name!' })
    expect(bad.status).toBe(400)
    const none = await callApi(serve.client, 'POST', '/v3/templates', {})
    expect(none).toMatchObject({ status: 400, body: { code: 400, message: 'Name is required' } })
  })
})
