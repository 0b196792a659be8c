import { TemplateFileLengthError, type TemplateFiles } from '../builder/index.js'
import type { Store, Team } from '../store/index.js'
import { templateErrors } from './template-errors.js'
import { UPLOAD_URL_LIFETIME_MS, UploadSigner } from './upload-signature.js'

/** Wire contract §1.4: a files hash is SHA-256 hex. */
const FILES_HASH = /^[0-9a-f]{64}$/
/** The largest `COPY` archive accepted when serve names no other (`maxUploadBytes`). */
export const DEFAULT_MAX_UPLOAD_BYTES = 4 * 1024 ** 3

export interface TemplateUploadsConfig {
  /** The key upload URLs are signed with; a new one at each start voids older URLs. */
  uploadKey: Buffer
  maxUploadBytes?: number
}

/** What a signed upload request carries besides its body. */
export interface UploadRequest {
  templateID: string
  hash: string
  expires: string | undefined
  signature: string | undefined
  contentLength: string | undefined
  chunked: boolean
  body: AsyncIterable<Uint8Array>
}

/**
 * `COPY` archives (§2.1 step 2, §2.3): the link route answers whether an archive is there and
 * where to PUT it; the PUT itself, signed instead of keyed, stores it in the builder's files.
 */
export class TemplateUploads {
  private readonly signer: UploadSigner
  readonly maxUploadBytes: number

  constructor(
    private readonly store: Store,
    private readonly files: TemplateFiles,
    config: TemplateUploadsConfig,
  ) {
    this.signer = new UploadSigner(config.uploadKey)
    this.maxUploadBytes = config.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES
  }

  /** `GET /templates/{t}/files/{hash}`: `{present, url}`, the URL under `origin`. */
  async link(team: Team, templateID: string, hash: string, origin: string) {
    if (!FILES_HASH.test(hash)) throw templateErrors.invalidFilesHash()
    const template = await this.store.getTemplate(templateID)
    if (template === undefined || template.deletedAt !== null)
      throw templateErrors.templateMissing(templateID)
    if (template.teamID !== team.id) throw templateErrors.templateNoAccess()
    const expires = Math.floor((Date.now() + UPLOAD_URL_LIFETIME_MS) / 1000)
    const signature = this.signer.sign({ templateID, hash, expires })
    const url = new URL(`/templates/${encodeURIComponent(templateID)}/files/${hash}`, origin)
    url.searchParams.set('expires', String(expires))
    url.searchParams.set('signature', signature)
    return { present: await this.files.has(templateID, hash), url: url.toString() }
  }

  /** The signed PUT: exact length required, bounded, written whole or not at all. */
  async accept(request: UploadRequest): Promise<void> {
    const { templateID, hash } = request
    const expires = Number(request.expires)
    if (
      !FILES_HASH.test(hash) ||
      request.signature === undefined ||
      !/^\d+$/.test(request.expires ?? '') ||
      !this.signer.verify({ templateID, hash, expires }, request.signature)
    )
      throw templateErrors.uploadSignatureInvalid()
    if (expires * 1000 < Date.now()) throw templateErrors.uploadExpired()
    if (request.chunked || !/^\d+$/.test(request.contentLength ?? ''))
      throw templateErrors.uploadLengthRequired()
    const length = Number(request.contentLength)
    if (length > this.maxUploadBytes) throw templateErrors.uploadTooLarge(this.maxUploadBytes)
    const template = await this.store.getTemplate(templateID)
    if (template === undefined || template.deletedAt !== null)
      throw templateErrors.templateMissing(templateID)
    try {
      await this.files.write(templateID, hash, request.body, length)
    } catch (error) {
      if (error instanceof TemplateFileLengthError)
        throw templateErrors.uploadLengthMismatch(error.message)
      throw error
    }
  }
}
