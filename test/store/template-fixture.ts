import { randomBytes, randomUUID } from 'node:crypto'
import type { BuildResult, Template, TemplateBuild } from '../../src/store/index.js'
import { BASE_TIME } from './store-fixture.js'

/** A live template of `teamID`; `at` is its creation time in seconds after BASE_TIME. */
export function template(
  teamID: string,
  name: string,
  at: number,
  overrides: Partial<Template> = {},
): Template {
  const createdAt = new Date(BASE_TIME + at * 1000)
  return {
    templateID: randomBytes(10).toString('hex'),
    teamID,
    name,
    public: false,
    createdAt,
    updatedAt: createdAt,
    lastSpawnedAt: null,
    spawnCount: 0,
    deletedAt: null,
    sourceSandboxID: null,
    ...overrides,
  }
}

/** A waiting build of `templateID`; `at` is its creation time in seconds after BASE_TIME. */
export function build(
  templateID: string,
  at: number,
  overrides: Partial<TemplateBuild> = {},
): TemplateBuild {
  const createdAt = new Date(BASE_TIME + at * 1000)
  return {
    buildID: randomUUID(),
    templateID,
    status: 'waiting',
    createdAt,
    updatedAt: createdAt,
    finishedAt: null,
    cpuCount: 2,
    memoryMB: 512,
    diskSizeMB: 1024,
    envdVersion: null,
    tags: ['default'],
    result: null,
    failure: null,
    ...overrides,
  }
}

/** What a ready build over these layers holds. */
export function result(layers: string[], overrides: Partial<BuildResult> = {}): BuildResult {
  return { layers, defaultUser: 'user', defaultWorkdir: '/home/user', envVars: {}, ...overrides }
}

/** A ready build of `templateID` over these layers. */
export function readyBuild(templateID: string, at: number, layers: string[]): TemplateBuild {
  const finishedAt = new Date(BASE_TIME + at * 1000 + 500)
  return build(templateID, at, {
    status: 'ready',
    updatedAt: finishedAt,
    finishedAt,
    envdVersion: '0.5.0',
    result: result(layers),
  })
}
