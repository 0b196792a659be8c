import { describe, expect, it } from 'vitest'
import { envdRequestTarget } from '../../../src/proxy/envd-request-target.js'
import { ProxyError } from '../../../src/proxy/proxy-errors.js'

function refusal(target: string): { status: number; message: string } | undefined {
  try {
    envdRequestTarget(target)
    return undefined
  } catch (error) {
    if (!(error instanceof ProxyError)) throw error
    return { status: error.status, message: error.message }
  }
}

describe('envdRequestTarget', () => {
  it.each([
    '/health',
    '/envs',
    '/files?path=/home/user/it%27s%20here&username=user',
    "/files?path=it's",
    '/files?path=/init',
    '/files/compose',
    '/process.Process/Start',
    '/filesystem.Filesystem/WatchDir',
    '/init2',
    '/...',
    '/',
    '/health/',
  ])('forwards %s as sent', (target) => {
    expect(envdRequestTarget(target)).toBe(target)
  })

  it.each(['/init', '/freeze', '/unfreeze', '/fsfreeze', '/fsthaw', '/collapse', '/upgrade'])(
    'refuses the control route %s with 404',
    (target) => {
      expect(refusal(target)).toEqual({
        status: 404,
        message:
          'This endpoint is reserved for the E2B control plane and is not reachable through the sandbox URL',
      })
    },
  )

  it.each(['/init?x=1', '/init/', '/INIT', '/Init/?a'])(
    'refuses %s, a case or trailing-slash spelling of /init, with 404',
    (target) => {
      expect(refusal(target)?.status).toBe(404)
    },
  )

  it.each([
    '/./init',
    '/%2e/init',
    '/%2E%2E/init',
    '/x/../init',
    '/files/../init',
    '/x/%2e./init',
    '/./../init',
    '/.',
    '/x/..',
    '//init',
    '//x/init',
    '//',
    '/\\x\\init',
    '/x\\..\\init',
    'http://h/init',
    'HTTP://h/init',
    'h:49983',
    '*',
    '/%69nit',
    '/%zz',
    '/init#x',
    '/init;x',
    '/in it',
    '/ïnit',
    '/health//x',
  ])('refuses the non-canonical %s with 400', (target) => {
    expect(refusal(target)).toEqual({ status: 400, message: 'Invalid request path' })
  })
})
