import { describe, expect, it } from 'vitest'
import { ApiError, apiErrors } from '../../../src/api/errors.js'

describe('the API error catalog', () => {
  it('answers with E2B body and status, code numeric', () => {
    const error = apiErrors.sandboxNotFound('iabc')
    expect(error).toBeInstanceOf(ApiError)
    expect(error.status).toBe(404)
    expect(error.body()).toEqual({
      code: 404,
      message: `Sandbox "iabc" doesn't exist or you don't have access to it`,
    })
  })

  it('quotes the contract texts exactly', () => {
    expect(apiErrors.invalidApiKey('malformed').body()).toEqual({
      code: 401,
      message:
        'Invalid API key, please visit https://e2b.dev/docs/api-key for more information.\nmalformed',
    })
    expect(apiErrors.sandboxAlreadyPaused('iabc').body()).toEqual({
      code: 409,
      message: "Error pausing sandbox - sandbox 'iabc' is already paused",
    })
    expect(apiErrors.templateNotFound('nope').body()).toEqual({
      code: 404,
      message: "template 'nope' not found",
    })
    expect(apiErrors.timeoutNotPositive().body()).toEqual({
      code: 400,
      message: 'Timeout must be greater than 0',
    })
    expect(apiErrors.invalidDeniedCIDR('example.com').body()).toEqual({
      code: 400,
      message: 'invalid denied CIDR example.com',
    })
  })

  it('maps every kind to its status', () => {
    const statuses = [
      apiErrors.validation('x'),
      apiErrors.invalidApiKey('x'),
      apiErrors.templateForbidden('t'),
      apiErrors.templateNotFound('t'),
      apiErrors.sandboxBeingKilled('i'),
      apiErrors.concurrencyLimit(1),
      apiErrors.internal(),
      apiErrors.notImplemented('Snapshots are not supported by this Sandbar server yet: x.'),
      apiErrors.unsupportedField('mcp', 'x.'),
    ].map((error) => error.status)
    expect(statuses).toEqual([400, 401, 403, 404, 409, 429, 500, 501, 400])
  })

  it("says the concurrency limit is this host's, and how to raise it", () => {
    expect(apiErrors.concurrencyLimit(20).body()).toEqual({
      code: 429,
      message:
        'you have reached the maximum number of concurrent sandboxes on this Sandbar server (20). Kill or pause one, or have its operator restart sandbar serve with a higher --max-sandboxes (its start output says what bounds the limit on this host)',
    })
  })

  it('names an unsupported field and why', () => {
    expect(apiErrors.unsupportedField('mcp', 'it has no MCP gateway.').body()).toEqual({
      code: 400,
      message: 'mcp is not supported by this Sandbar server yet: it has no MCP gateway.',
    })
  })

  it('names the allowOut entry no sandbox may reach, and why', () => {
    const pool = { cidr: '10.231.0.0/16', kind: 'address pool' as const }
    expect(
      apiErrors.unreachableAllowedEntry({ entry: '10.231.0.6', network: pool }).body(),
    ).toEqual({
      code: 400,
      message:
        'allowOut entry 10.231.0.6 overlaps the sandbox address pool 10.231.0.0/16: sandboxes never reach other sandboxes or the host',
    })
    const host = { cidr: '192.0.2.2/32', kind: 'host address' as const }
    expect(
      apiErrors.unreachableAllowedEntry({ entry: '192.0.2.0/24', network: host }).message,
    ).toBe(
      'allowOut entry 192.0.2.0/24 overlaps the host address 192.0.2.2: sandboxes never reach other sandboxes or the host',
    )
  })
})
