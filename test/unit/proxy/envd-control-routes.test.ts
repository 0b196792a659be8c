import { describe, expect, it } from 'vitest'
import { isEnvdControlRoute, normalizedPath } from '../../../src/proxy/envd-control-routes.js'

describe('isEnvdControlRoute', () => {
  it.each([
    '/init',
    '/freeze',
    '/unfreeze',
    '/fsfreeze',
    '/fsthaw',
    '/collapse',
    '/upgrade',
    '/init?x=1',
    '//init/',
    '/%69nit',
  ])('blocks %s', (target) => {
    expect(isEnvdControlRoute(target)).toBe(true)
  })

  it.each(['/health', '/files?path=/init', '/init2', '/process.Process/Start', '/'])(
    'lets %s through',
    (target) => {
      expect(isEnvdControlRoute(target)).toBe(false)
    },
  )

  it('keeps an undecodable path as sent', () => {
    expect(normalizedPath('/%zz/')).toBe('/%zz')
  })
})
