const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const ASCII = /^[\x20-\x7e]*$/

/**
 * `inline; filename=<name>` for a download, formatted as Go's `mime.FormatMediaType` does for
 * envd: a token stays bare, other ASCII is quoted, anything else uses RFC 5987's
 * `filename*=utf-8''<percent-encoded>`.
 */
export function inlineContentDisposition(filename: string): string {
  if (TOKEN.test(filename)) return `inline; filename=${filename}`
  if (ASCII.test(filename)) return `inline; filename="${filename.replace(/(["\\])/g, '\\$1')}"`
  return `inline; filename*=utf-8''${rfc5987Encode(filename)}`
}

function rfc5987Encode(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  )
}
