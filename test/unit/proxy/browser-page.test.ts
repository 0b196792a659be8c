import { describe, expect, it } from 'vitest'
import { browserPage, isBrowserNavigation } from '../../../src/proxy/browser-page.js'
import { proxyErrors } from '../../../src/proxy/proxy-errors.js'

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'

describe('isBrowserNavigation', () => {
  it.each([
    [{ 'user-agent': FIREFOX }, true],
    [{ 'user-agent': FIREFOX, 'sec-fetch-mode': 'navigate', accept: 'text/html' }, true],
    [{ 'user-agent': FIREFOX, accept: 'application/json' }, false],
    [{ 'user-agent': FIREFOX, 'sec-fetch-mode': 'cors' }, false],
    [{ 'user-agent': 'e2b-js-sdk/2.51.0' }, false],
    [{ 'user-agent': 'curl/8.5.0' }, false],
    [{}, false],
  ])('%o → %s', (headers, expected) => {
    expect(isBrowserNavigation(headers)).toBe(expected)
  })
})

describe('browserPage', () => {
  it('shows the status and the escaped message', () => {
    const page = browserPage(proxyErrors.resumeDenied('isbx'))
    expect(page).toContain('<h1>403</h1>')
    expect(page).toContain('This sandbox can&#39;t be resumed with the credentials provided.')
  })
})
