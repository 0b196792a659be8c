/** Jupyter MIME keys → the `result` event's fields (wire contract §1.5). */
const fieldOfMime: Record<string, string> = {
  'text/plain': 'text',
  'text/html': 'html',
  'text/markdown': 'markdown',
  'image/svg+xml': 'svg',
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'application/pdf': 'pdf',
  'text/latex': 'latex',
  'application/json': 'json',
  'application/javascript': 'javascript',
  'e2b/data': 'data',
  'e2b/chart': 'chart',
}

/** `'…'` or `"…"` around the whole text is dropped: JS `process.cwd()` reads `/home/user`. */
export function stripQuotes(text: string): string {
  if (text.length >= 2) {
    const first = text[0]
    if ((first === "'" || first === '"') && text.at(-1) === first) return text.slice(1, -1)
  }
  return text
}

export function resultFields(bundle: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  const extra: Record<string, unknown> = {}
  for (const [mime, value] of Object.entries(bundle)) {
    const field = fieldOfMime[mime]
    if (field === undefined) extra[mime] = value
    else fields[field] = field === 'text' && typeof value === 'string' ? stripQuotes(value) : value
  }
  return { ...fields, extra }
}
