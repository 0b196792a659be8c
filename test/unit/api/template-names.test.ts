import { describe, expect, it } from 'vitest'
import {
  buildTags,
  parseTemplateReference,
  templateAlias,
} from '../../../src/api/template-names.js'
import { checkTemplateSizes, DEFAULT_SIZE_LIMITS } from '../../../src/api/template-sizes.js'
import { templateVersion } from '../../../src/api/template-version.js'

const invalid = (reason: string) => new Error(reason)

describe('parseTemplateReference', () => {
  it.each([
    ['base', { alias: 'base' }],
    ['  My-App_1 ', { alias: 'my-app_1' }],
    ['app:v1.2', { alias: 'app', tag: 'v1.2' }],
    ['app:default', { alias: 'app' }],
    ['team/app:beta', { namespace: 'team', alias: 'app', tag: 'beta' }],
  ])('reads %j', (raw, expected) => {
    expect(parseTemplateReference(raw, invalid)).toEqual({
      namespace: undefined,
      tag: undefined,
      ...expected,
    })
  })

  it.each([
    ['', "name '' may contain only a-z, 0-9, '-' and '_'"],
    ['a b', "name 'a b' may contain only a-z, 0-9, '-' and '_'"],
    ['a/b/c', "name 'b/c' may contain only a-z, 0-9, '-' and '_'"],
    ['t.x/app', "namespace 't.x' may contain only a-z, 0-9, '-' and '_'"],
    ['app:', "tag '' may contain only a-z, 0-9, '-', '_' and '.'"],
    [
      'app:0b3c7a1e-2f4d-4e5a-9b6c-7d8e9f0a1b2c',
      "tag '0b3c7a1e-2f4d-4e5a-9b6c-7d8e9f0a1b2c' must not be a UUID",
    ],
  ])('refuses %j', (raw, reason) => {
    expect(() => parseTemplateReference(raw, invalid)).toThrow(reason)
  })
})

describe('templateAlias', () => {
  it('is the name, except for an unnamed snapshot, whose name is its own ID', () => {
    const id = 'snap0000000000000000'
    expect(templateAlias({ templateID: id, name: id, sourceSandboxID: 'isource' })).toBeUndefined()
    expect(templateAlias({ templateID: id, name: 'mine', sourceSandboxID: 'isource' })).toBe('mine')
    // Sandbar's own templates are named as their IDs, and keep the alias.
    expect(templateAlias({ templateID: 'base', name: 'base', sourceSandboxID: null })).toBe('base')
  })
})

describe('buildTags', () => {
  it('puts the name’s tag first, lower-cases and drops repeats', () => {
    expect(buildTags('v1', ['Beta', 'v1', 'beta'])).toEqual(['v1', 'beta'])
  })

  it('is default when no tag is given', () => {
    expect(buildTags(undefined, [])).toEqual(['default'])
  })
})

describe('checkTemplateSizes', () => {
  it('fills E2B’s defaults and the disk size', () => {
    expect(checkTemplateSizes({}, DEFAULT_SIZE_LIMITS)).toEqual({
      cpuCount: 2,
      memoryMB: 1024,
      diskSizeMB: 512,
    })
  })

  it('holds requests to the team maxima it is given', () => {
    const limits = { ...DEFAULT_SIZE_LIMITS, maxCpuCount: 4, maxMemoryMB: 2048 }
    expect(() => checkTemplateSizes({ cpuCount: 6 }, limits)).toThrow('CPU count must be at most 4')
    expect(() => checkTemplateSizes({ memoryMB: 4096 }, limits)).toThrow(
      'Memory must be at most 2048 MiB',
    )
    expect(checkTemplateSizes({ cpuCount: 4, memoryMB: 128 }, limits)).toMatchObject({
      cpuCount: 4,
      memoryMB: 128,
    })
  })
})

describe('templateVersion', () => {
  it.each([
    [undefined, 'v2.1.0'],
    ['e2b-js-sdk/2.2.14', 'v2.0.0'],
    ['e2b-js-sdk/1.13.2', 'v2.0.0'],
    ['e2b-python-sdk/2.3.0', 'v2.1.0'],
    ['Mozilla/5.0 e2b-js-sdk/2.51.0', 'v2.1.0'],
    ['e2b-js-sdk/3.0.0', 'v2.1.0'],
  ])('%s builds %s', (userAgent, version) => {
    expect(templateVersion(userAgent)).toBe(version)
  })
})
