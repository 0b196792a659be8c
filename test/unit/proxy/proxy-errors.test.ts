import { describe, expect, it } from 'vitest'
import { proxyErrors, rawResponse } from '../../../src/proxy/proxy-errors.js'

// Bodies and statuses quoted from e2b-wire-contract.md §4.4 and §4.6.
describe('proxyErrors', () => {
  it.each([
    [
      proxyErrors.sandboxNotFound('isbx'),
      502,
      '{"sandboxId":"isbx","message":"The sandbox was not found","code":502}',
    ],
    [
      proxyErrors.portClosed('isbx', 8080),
      502,
      '{"sandboxId":"isbx","message":"The sandbox is running but port is not open","port":8080,"code":502}',
    ],
    [
      proxyErrors.resumeDenied('isbx'),
      403,
      '{"sandboxId":"isbx","message":"This sandbox can\'t be resumed with the credentials provided. Check your access token and try again.","code":403}',
    ],
    [
      proxyErrors.trafficTokenMissing('isbx'),
      403,
      '{"sandboxId":"isbx","message":"Sandbox is secured with traffic access token. Token header \'e2b-traffic-access-token\' is missing","code":403}',
    ],
    [
      proxyErrors.trafficTokenInvalid('isbx'),
      403,
      '{"sandboxId":"isbx","message":"Sandbox is secured with traffic access token. Provided token in header \'e2b-traffic-access-token\' is invalid","code":403}',
    ],
    [
      proxyErrors.internalRoute('/init'),
      404,
      '{"message":"This endpoint is reserved for the E2B control plane and is not reachable through the sandbox URL","path":"/init","code":404}',
    ],
  ])('JSON %#', (error, status, body) => {
    expect(error.status).toBe(status)
    expect(error.contentType).toBe('application/json; charset=utf-8')
    expect(error.body).toBe(body)
  })

  it.each([
    [proxyErrors.invalidHost(), 'Invalid host\n'],
    [proxyErrors.invalidSandboxID(), 'Invalid sandbox ID\n'],
    [proxyErrors.invalidSandboxPort(), 'Invalid sandbox port\n'],
    [proxyErrors.missingHeader(), 'missing header\n'],
  ])('plain text 400 %#', (error, body) => {
    expect(error.status).toBe(400)
    expect(error.contentType).toBe('text/plain; charset=utf-8')
    expect(error.body).toBe(body)
  })

  it('renders raw HTTP for upgrade sockets', () => {
    expect(rawResponse(proxyErrors.missingHeader())).toBe(
      'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n' +
        'Content-Length: 15\r\nConnection: close\r\n\r\nmissing header\n',
    )
  })
})
