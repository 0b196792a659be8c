import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Sandbox } from 'e2b'
import { extract } from 'tar-stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Issue 14's Sandbar extension: GET /sandboxes/{id}/changes, what a sandbox changed against its
// template, as JSON and as a tar stream in OCI layer form.

let serve: ServeInstance
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe()
})

afterAll(async () => {
  expect(await serve?.stop()).toEqual([])
})

/** The entries of a tar archive: name, owner, type and content. */
async function tarEntries(archive: Buffer) {
  const reader = extract()
  reader.end(archive)
  const entries: { name: string; uid: number; type: string; text: string }[] = []
  for await (const entry of reader) {
    const chunks: Buffer[] = []
    for await (const chunk of entry) chunks.push(chunk as Buffer)
    const { name, uid = -1, type = 'file' } = entry.header
    entries.push({ name, uid, type: String(type), text: Buffer.concat(chunks).toString() })
  }
  return entries
}

describe('sandbox changes', () => {
  it('lists what a sandbox added, modified and deleted, and hands it over as an OCI layer', async () => {
    const sandbox = await Sandbox.create(opts())
    try {
      await sandbox.files.write('/home/user/project/notes.txt', 'new file')
      await sandbox.commands.run('echo edited > /etc/issue && rm /etc/debian_version', {
        user: 'root',
      })
      const answer = await callApi(serve.client, 'GET', `/sandboxes/${sandbox.sandboxId}/changes`)
      expect(answer.status).toBe(200)
      const { changes } = answer.body as { changes: { path: string; kind: string; type: string }[] }
      expect(changes).toContainEqual({
        path: '/home/user/project',
        kind: 'added',
        type: 'directory',
      })
      expect(changes).toContainEqual({
        path: '/home/user/project/notes.txt',
        kind: 'added',
        type: 'file',
      })
      expect(changes).toContainEqual({ path: '/etc/issue', kind: 'modified', type: 'file' })
      expect(changes).toContainEqual({
        path: '/etc/debian_version',
        kind: 'deleted',
        type: 'other',
      })
      // Directories only walked through to a change are not changes.
      expect(changes.map((change) => change.path)).not.toContain('/etc')

      const tar = await fetch(
        `${serve.client.apiUrl}/sandboxes/${sandbox.sandboxId}/changes?format=tar`,
        { headers: { 'X-API-Key': serve.client.apiKey } },
      )
      expect(tar.status).toBe(200)
      expect(tar.headers.get('content-type')).toBe('application/x-tar')
      const entries = await tarEntries(Buffer.from(await tar.arrayBuffer()))
      expect(entries).toContainEqual({
        name: 'home/user/project/notes.txt',
        uid: 1000,
        type: 'file',
        text: 'new file',
      })
      expect(entries).toContainEqual({ name: 'etc/issue', uid: 0, type: 'file', text: 'edited\n' })
      expect(entries.map((entry) => entry.name)).toContain('etc/.wh.debian_version')
    } finally {
      await sandbox.kill()
    }
  })

  it('keeps serving after a client leaves in the middle of an archive', async () => {
    const sandbox = await Sandbox.create(opts())
    try {
      await sandbox.commands.run('head -c 50000000 /dev/urandom > /home/user/big')
      const url = `${serve.client.apiUrl}/sandboxes/${sandbox.sandboxId}/changes?format=tar`
      const leaving = new AbortController()
      const partial = await fetch(url, {
        headers: { 'X-API-Key': serve.client.apiKey },
        signal: leaving.signal,
      })
      await partial.body?.getReader().read()
      leaving.abort()
      const whole = await fetch(url, { headers: { 'X-API-Key': serve.client.apiKey } })
      const entries = await tarEntries(Buffer.from(await whole.arrayBuffer()))
      expect(entries.find((entry) => entry.name === 'home/user/big')?.text.length).toBeGreaterThan(
        0,
      )
    } finally {
      await sandbox.kill()
    }
  })

  it('never lists or archives a host file a sandbox swaps a symlink in for, mid-walk', async () => {
    const canary = await mkdtemp('/tmp/sbt-canary-')
    try {
      await writeFile(path.join(canary, 'host-secret'), 'the host secret')
      const sandbox = await Sandbox.create(opts())
      try {
        // A file and a directory, each swapped again and again for a symlink to the host's
        // canary (absolute: resolved on the host side, it would name the host's file).
        const swapper = [
          'cd /home/user && mkdir d && echo mine > d/host-secret && echo mine > f',
          `ln -s ${canary} dlink && ln -s ${canary}/host-secret flink`,
          'while true; do mv -T d d.real; cp -P dlink d; mv -T f f.real; cp -P flink f',
          'rm d f; mv -T d.real d; mv -T f.real f; done',
        ].join('; ')
        await sandbox.commands.run(swapper, { background: true, timeoutMs: 0 })
        const url = `${serve.client.apiUrl}/sandboxes/${sandbox.sandboxId}/changes`
        const headers = { 'X-API-Key': serve.client.apiKey }
        for (let round = 0; round < 20; round++) {
          const listed = await (await fetch(url, { headers })).text()
          expect(listed).not.toContain(canary)
          const archive = Buffer.from(
            await (await fetch(`${url}?format=tar`, { headers })).arrayBuffer(),
          )
          expect(archive.toString('latin1')).not.toContain('the host secret')
        }
      } finally {
        await sandbox.kill()
      }
    } finally {
      // Even when the service cannot create or kill the sandbox.
      await rm(canary, { recursive: true, force: true })
    }
  })

  it("answers 404 for a sandbox that is not the team's and 400 for a bad format", async () => {
    const unknown = await callApi(serve.client, 'GET', '/sandboxes/inotasandbox0000000000/changes')
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({
      code: 404,
      message: 'Sandbox "inotasandbox0000000000" doesn\'t exist or you don\'t have access to it',
    })
    const sandbox = await Sandbox.create(opts())
    try {
      const bad = await callApi(
        serve.client,
        'GET',
        `/sandboxes/${sandbox.sandboxId}/changes?format=zip`,
      )
      expect(bad.status).toBe(400)
      expect((bad.body as { code: number }).code).toBe(400)
    } finally {
      await sandbox.kill()
    }
  })
})
