import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { errnoCode } from '../errno-code.js'
import type { TemplateFiles } from './index.js'

/** A template ID or files hash that could leave `<dir>/<templateID>/` is refused outright. */
const SAFE_NAME = /^[a-z0-9][a-z0-9-_]*$/

/** An upload whose body was not the length it announced; nothing of it is kept. */
export class TemplateFileLengthError extends Error {
  constructor(
    readonly expected: number,
    readonly received: number,
  ) {
    super(
      received > expected
        ? `the body is longer than its Content-Length of ${expected} bytes`
        : `the body ended after ${received} of its ${expected} bytes`,
    )
  }
}

/**
 * The `COPY` archives of each template (§2.3) as files `<dir>/<templateID>/<hash>`, 0600. An
 * upload is written under a temporary name and renamed once complete and of the right length,
 * so a reader never sees half an archive.
 */
export function createTemplateFiles(dir: string): TemplateFiles {
  const fileOf = (templateID: string, hash: string) => path.join(dir, safe(templateID), safe(hash))

  return {
    async has(templateID, hash) {
      try {
        return (await stat(fileOf(templateID, hash))).isFile()
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return false
        throw error
      }
    },

    async read(templateID, hash) {
      try {
        return await readFile(fileOf(templateID, hash))
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw error
        throw new Error(`the files of hash ${hash} were never uploaded for template ${templateID}`)
      }
    },

    async write(templateID, hash, body, length) {
      const file = fileOf(templateID, hash)
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
      const temporary = `${file}.${randomBytes(6).toString('hex')}.partial`
      const handle = await open(temporary, 'wx', 0o600)
      try {
        let received = 0
        for await (const chunk of body) {
          received += chunk.byteLength
          if (received > length) throw new TemplateFileLengthError(length, received)
          await handle.write(chunk)
        }
        if (received !== length) throw new TemplateFileLengthError(length, received)
        await handle.sync()
        await handle.close()
        await rename(temporary, file)
      } catch (error) {
        await handle.close().catch(() => {})
        await rm(temporary, { force: true })
        throw error
      }
    },

    async removeTemplate(templateID) {
      await rm(path.join(dir, safe(templateID)), { recursive: true, force: true })
    },
  }
}

function safe(name: string): string {
  if (!SAFE_NAME.test(name)) throw new Error(`not a template ID or files hash: '${name}'`)
  return name
}
