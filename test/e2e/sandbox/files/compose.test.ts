import { describe, expect, inject } from 'vitest'
import { sandboxTest } from '../../setup.js'

/** The SDK has no compose call: the route is driven as a client of envd's HTTP API would. */
function compose(body: unknown): Promise<Response> {
  return fetch(`${inject('envdUrl')}/files/compose`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

describe('POST /files/compose', () => {
  sandboxTest(
    'concatenates sources into a new file and removes them',
    async ({ sandbox, testDir }) => {
      await sandbox.files.write(`${testDir}/part-1`, 'Hello, ')
      await sandbox.files.write(`${testDir}/part-2`, 'composed ')
      await sandbox.files.write(`${testDir}/part-3`, 'world!')
      const response = await compose({
        source_paths: [`${testDir}/part-1`, `${testDir}/part-2`, `${testDir}/part-3`],
        destination: `${testDir}/out/joined.txt`,
      })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({
        path: `${testDir}/out/joined.txt`,
        name: 'joined.txt',
        type: 'file',
      })
      expect(await sandbox.files.read(`${testDir}/out/joined.txt`)).toBe('Hello, composed world!')
      expect(await sandbox.files.exists(`${testDir}/part-1`)).toBe(false)
      expect(await sandbox.files.exists(`${testDir}/part-3`)).toBe(false)
      expect((await sandbox.files.getInfo(`${testDir}/out/joined.txt`)).owner).toBe('user')
    },
  )

  sandboxTest('resolves relative paths for the named user', async ({ sandbox, testDir }) => {
    const dir = testDir.replace('/home/user/', '')
    await sandbox.files.write(`${testDir}/a`, 'A')
    await sandbox.files.write(`${testDir}/b`, 'B')
    const response = await compose({
      source_paths: [`${dir}/a`, `~/${dir}/b`],
      destination: `${dir}/ab`,
      username: 'user',
    })
    expect(response.status).toBe(200)
    expect(await sandbox.files.read(`${testDir}/ab`)).toBe('AB')
  })

  sandboxTest('replaces an existing destination', async ({ sandbox, testDir }) => {
    await sandbox.files.write(`${testDir}/dest`, 'old content that is longer')
    await sandbox.files.write(`${testDir}/src`, 'new')
    const response = await compose({
      source_paths: [`${testDir}/src`],
      destination: `${testDir}/dest`,
    })
    expect(response.status).toBe(200)
    expect(await sandbox.files.read(`${testDir}/dest`)).toBe('new')
  })

  sandboxTest('a missing source is 404 and changes nothing', async ({ sandbox, testDir }) => {
    await sandbox.files.write(`${testDir}/kept`, 'kept')
    const response = await compose({
      source_paths: [`${testDir}/kept`, `${testDir}/missing`],
      destination: `${testDir}/never`,
    })
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({
      code: 404,
      message: `source file not found: ${testDir}/missing`,
    })
    expect(await sandbox.files.read(`${testDir}/kept`)).toBe('kept')
    expect(await sandbox.files.exists(`${testDir}/never`)).toBe(false)
  })

  sandboxTest('a malformed request is 400', async () => {
    expect((await compose('{not json')).status).toBe(400)
    const empty = await compose({ source_paths: [], destination: 'x' })
    expect(empty.status).toBe(400)
    expect(await empty.json()).toMatchObject({
      code: 400,
      message: expect.stringContaining('source_paths must not be empty'),
    })
    expect((await compose({ source_paths: ['a'] })).status).toBe(400)
  })
})
