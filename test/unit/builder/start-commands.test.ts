import { describe, expect, it } from 'vitest'
import type { BuildBase, BuildRequest } from '../../../src/builder/index.js'
import { startCommands } from '../../../src/builder/start-commands.js'

const interpreterBase: BuildBase = {
  kind: 'template',
  name: 'code-interpreter-v1',
  build: {
    layers: ['l1'],
    defaultUser: 'user',
    defaultWorkdir: '/home/user',
    envVars: {},
    startCmd: 'serve-interpreter',
    readyCmd: 'curl health',
  },
}

function request(overrides: Partial<BuildRequest>): BuildRequest {
  return {
    teamID: 't',
    templateID: 'tpl',
    buildID: 'b',
    base: interpreterBase,
    force: false,
    steps: [],
    cpuCount: 2,
    memoryMB: 1024,
    diskSizeMB: 1024,
    version: 'v2.1.0',
    ...overrides,
  }
}

describe('startCommands (§2.5)', () => {
  it("keeps the base template's commands when the build sets none, as E2B does", () => {
    expect(startCommands(request({}))).toEqual({
      startCmd: 'serve-interpreter',
      readyCmd: 'curl health',
    })
  })

  it('uses the commands the build sets, even one of the two', () => {
    expect(startCommands(request({ startCmd: 'mine' }))).toEqual({
      startCmd: 'mine',
      readyCmd: undefined,
    })
    expect(startCommands(request({ readyCmd: 'my check' }))).toEqual({
      startCmd: undefined,
      readyCmd: 'my check',
    })
  })

  it('gives an image base none but its own', () => {
    const base: BuildBase = { kind: 'image', image: 'e2bdev/base' }
    expect(startCommands(request({ base }))).toEqual({ startCmd: undefined, readyCmd: undefined })
  })
})
