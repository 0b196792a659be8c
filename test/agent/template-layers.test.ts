import { randomBytes } from 'node:crypto'
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import {
  baseTemplate,
  sandboxRequest,
  startTestAgent,
  TEMPLATE_CACHE,
  type TestAgent,
} from './agent-fixture.js'

// A build step's writes become a template layer (agent.commit), later sandboxes stack it, and
// a template's start command is running and ready when create returns.

let test: TestAgent
const layerID = `t-${randomBytes(8).toString('hex')}`
const squashedID = `q-${randomBytes(8).toString('hex')}`

beforeAll(async () => {
  test = await startTestAgent()
})

afterAll(async () => {
  try {
    const leaks = await test?.dispose()
    expect(leaks).toEqual([])
  } finally {
    // Collect every layer this file made (the shared cache keeps the base layer it did not).
    await test?.agent.layers.collect(new Set(await otherLayers()))
  }
})

const layersDir = path.join(TEMPLATE_CACHE, 'layers')

/** Layers in the shared cache other than this file's. */
async function otherLayers(): Promise<string[]> {
  return (await readdir(layersDir)).filter((name) => name !== layerID && name !== squashedID)
}

describe('a committed layer', () => {
  beforeAll(async () => {
    const info = await test.agent.create(sandboxRequest())
    const sandbox = sandboxForEnvd(info.envdURL)
    await sandbox.commands.run(
      [
        'echo mine > /home/user/made-by-user',
        'sudo rm /etc/issue',
        'sudo rm -rf /opt && sudo mkdir /opt && sudo touch /opt/only',
        'sudo cp /bin/true /usr/local/bin/setuid-true && sudo chmod 4755 /usr/local/bin/setuid-true',
      ].join(' && '),
    )
    // Still running at commit: a layer is what the sandbox wrote, its processes end.
    await sandbox.commands.run('sleep 300', { background: true })
    await test.agent.commit(info.sandboxID, layerID)
    expect(await test.agent.list()).toEqual([])
  })

  it("holds the sandbox's writes with the image's owners, and its setuid bits", async () => {
    const layer = path.join(layersDir, layerID)
    const made = await stat(path.join(layer, 'home/user/made-by-user'))
    expect([made.uid, made.gid]).toEqual([1000, 1000])
    const setuid = await stat(path.join(layer, 'usr/local/bin/setuid-true'))
    expect([setuid.uid, setuid.mode & 0o7777]).toEqual([0, 0o4755])
    expect(await test.agent.layers.has(layerID)).toBe(true)
  })

  it('stacks on its parent: files, deletions and replaced directories show in a new sandbox', async () => {
    const info = await test.agent.create(
      sandboxRequest({ template: baseTemplate({ layers: [...baseTemplate().layers, layerID] }) }),
    )
    const sandbox = sandboxForEnvd(info.envdURL)
    const result = await sandbox.commands.run(
      'cat made-by-user; stat -c %U made-by-user; test -e /etc/issue || echo issue-gone; ls /opt; stat -c %a /usr/local/bin/setuid-true; pgrep sleep || echo no-sleep',
    )
    expect(result.stdout).toBe('mine\nuser\nissue-gone\nonly\n4755\nno-sleep\n')
    await test.agent.kill(info.sandboxID)
  })

  it('squashes with its parent into one layer that shows the same tree', async () => {
    await test.agent.layers.squash([...baseTemplate().layers, layerID], squashedID)
    const squashed = path.join(layersDir, squashedID)
    expect((await stat(path.join(squashed, 'home/user/made-by-user'))).uid).toBe(1000)
    await expect(stat(path.join(squashed, 'etc/issue'))).rejects.toThrow('ENOENT')
    expect(await readdir(path.join(squashed, 'opt'))).toEqual(['only'])
    const info = await test.agent.create(
      sandboxRequest({ template: baseTemplate({ layers: [squashedID] }) }),
    )
    const sandbox = sandboxForEnvd(info.envdURL)
    const result = await sandbox.commands.run(
      'cat made-by-user && whoami && sudo -n true && echo ok',
    )
    expect(result.stdout).toBe('mine\nuser\nok\n')
    await test.agent.kill(info.sandboxID)
  })

  it('is kept while a sandbox stacks it and collected once none does', async () => {
    const info = await test.agent.create(
      sandboxRequest({ template: baseTemplate({ layers: [...baseTemplate().layers, layerID] }) }),
    )
    const others = new Set([...(await otherLayers()), squashedID])
    expect(await test.agent.layers.collect(others)).toEqual([])
    await test.agent.kill(info.sandboxID)
    expect(await test.agent.layers.collect(others)).toEqual([layerID])
    expect(await test.agent.layers.has(layerID)).toBe(false)
  })
})

describe("a template's start command", () => {
  it('is running and ready when create returns, as the template user in its workdir', async () => {
    const template = baseTemplate({
      startCmd: 'sleep 0.5 && python3 -m http.server 8000 --bind 0.0.0.0',
      readyCmd: '[ -n "$(ss -Htln sport = :8000)" ]',
    })
    const info = await test.agent.create(sandboxRequest({ template }))
    const sandbox = sandboxForEnvd(info.envdURL)
    const result = await sandbox.commands.run(
      'curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8000/; echo; ps -o user=,args= -C python3',
    )
    expect(result.stdout).toMatch(/^200\nuser +python3 -m http.server 8000/)
    await test.agent.kill(info.sandboxID)
  })

  it('fails the create, leaving nothing behind, when it exits with an error', async () => {
    const template = baseTemplate({ startCmd: 'exit 3', readyCmd: 'false' })
    await expect(test.agent.create(sandboxRequest({ template }))).rejects.toThrow(
      'start command failed with exit code 3',
    )
    expect(await test.agent.list()).toEqual([])
  })

  it('fails the create when a template layer is missing', async () => {
    const template = baseTemplate({ layers: ['t-missing-layer'] })
    await expect(test.agent.create(sandboxRequest({ template }))).rejects.toThrow(
      "template 'base' not found",
    )
  })
})
