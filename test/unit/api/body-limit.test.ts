import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { requestBodyLimit } from '../../../src/api/body-limit.js'
import { ApiError } from '../../../src/api/errors.js'

const LIMIT = 16

/** An app behind the limit whose one route echoes the body's length, counting its calls. */
function limitedApp() {
  const app = new Hono()
  const reached = { count: 0 }
  app.use('*', requestBodyLimit(LIMIT))
  app.all('/echo', async (c) => {
    reached.count += 1
    return c.text(String((await c.req.text()).length))
  })
  app.onError((error, c) =>
    error instanceof ApiError ? c.json(error.body(), error.status) : c.text('unexpected', 500),
  )
  return { app, reached }
}

/** A body of declared length, as an HTTP/1.1 client sends one. */
function declared(bytes: number): RequestInit {
  return { method: 'POST', body: 'x'.repeat(bytes), headers: { 'content-length': String(bytes) } }
}

/** A body the client streams without declaring its length (Transfer-Encoding: chunked). */
function streamed(bytes: number): RequestInit {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes))
      controller.close()
    },
  })
  return {
    method: 'POST',
    body,
    headers: { 'transfer-encoding': 'chunked' },
    duplex: 'half',
  } as RequestInit
}

const tooLarge = { code: 413, message: `request body is larger than ${LIMIT} bytes` }

/** The contract's 413, with the route never reached. */
async function expectRefused(answer: Response, reached: { count: number }): Promise<void> {
  expect(answer.status).toBe(413)
  expect(await answer.json()).toEqual(tooLarge)
  expect(reached.count).toBe(0)
}

describe('requestBodyLimit', () => {
  it('refuses a declared length over the limit without calling the route', async () => {
    const { app, reached } = limitedApp()
    await expectRefused(await app.request('/echo', declared(LIMIT + 1)), reached)
  })

  it('passes a declared length within the limit, and a request without a body', async () => {
    const { app } = limitedApp()
    const post = await app.request('/echo', declared(LIMIT))
    expect(await post.text()).toBe(String(LIMIT))
    const get = await app.request('/echo')
    expect(get.status).toBe(200)
    expect(await get.text()).toBe('0')
  })

  it('counts a chunked body as it arrives', async () => {
    const { app, reached } = limitedApp()
    await expectRefused(await app.request('/echo', streamed(LIMIT + 1)), reached)
    const within = await app.request('/echo', streamed(LIMIT))
    expect(await within.text()).toBe(String(LIMIT))
  })
})
