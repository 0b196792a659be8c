import type { IncomingHttpHeaders } from 'node:http'
import type { ProxyError } from './proxy-errors.js'

// The user agents E2B's proxy treats as browsers.
const BROWSER = /mozilla|chrome|safari|firefox|edge|opera|msie/i

/**
 * Whether a request is a person's browser navigating, who gets the proxy's answers as an HTML
 * page: a browser user agent that does not ask for JSON and is not a script's fetch (wire
 * contract §4.6 "Proxy error responses").
 */
export function isBrowserNavigation(headers: IncomingHttpHeaders): boolean {
  const mode = headers['sec-fetch-mode']
  return (
    BROWSER.test(headers['user-agent'] ?? '') &&
    !(headers.accept ?? '').includes('application/json') &&
    (mode === undefined || mode === 'navigate')
  )
}

/** The error as a small HTML page with the same status and message. */
export function browserPage(error: ProxyError): string {
  const text = escapeHTML(error.message)
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${error.status}</title></head><body><h1>${error.status}</h1><p>${text}</p></body></html>\n`
}

function escapeHTML(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
}
