import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { errorOf, type FileRoutesFixture, fileRoutesFixture } from './file-routes-fixture.js'

let fx: FileRoutesFixture
beforeEach(async () => {
  fx = await fileRoutesFixture()
})
afterEach(() => fx.cleanup())

describe('envd HTTP routes', () => {
  it('answers an unknown path and an unrouted method with 404 in the error shape', async () => {
    const unknown = await fx.request('http://envd/nope')
    expect(unknown.status).toBe(404)
    expect(await errorOf(unknown)).toEqual({ code: 404, message: 'route GET /nope not found' })
    const wrongMethod = await fx.request('http://envd/health', { method: 'DELETE' })
    expect(wrongMethod.status).toBe(404)
    expect(await errorOf(wrongMethod)).toEqual({
      code: 404,
      message: 'route DELETE /health not found',
    })
  })

  it('serves HEAD as GET without a body', async () => {
    const response = await fx.request('http://envd/envs', { method: 'HEAD' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(await response.text()).toBe('')
  })

  it('answers /envs with the default environment as JSON', async () => {
    const response = await fx.request('http://envd/envs')
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(await response.json()).toEqual({ E2B_SANDBOX: 'true' })
  })
})
