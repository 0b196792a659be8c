import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../src/api/errors.js'
import { networkUpdateSchema, newSandboxSchema } from '../../../src/api/schemas/sandbox-requests.js'
import {
  refuseUnsupportedCreateFields,
  refuseUnsupportedNetworkFields,
} from '../../../src/api/unsupported-fields.js'

/** What a body gets from the refusal: the 400 body, or `accepted`. Bodies parse as on the wire. */
function answer(refuse: () => void) {
  try {
    refuse()
    return 'accepted'
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    return error.body()
  }
}

const create = (body: object) =>
  answer(() =>
    refuseUnsupportedCreateFields(newSandboxSchema.parse({ templateID: 'base', ...body })),
  )
const update = (body: object) =>
  answer(() => refuseUnsupportedNetworkFields(networkUpdateSchema.parse(body)))

/** The start every refusal's message has: the field, then that Sandbar lacks it. */
const refused = (field: string) =>
  expect.objectContaining({
    code: 400,
    message: expect.stringMatching(
      new RegExp(
        `^${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not supported by this Sandbar server yet: .+\\.$`,
      ),
    ),
  })

describe('create fields Sandbar cannot honour', () => {
  it('refuses each, naming the field', () => {
    expect(create({ mcp: { exa: { apiKey: 'k' } } })).toEqual({
      code: 400,
      message:
        'mcp is not supported by this Sandbar server yet: it has no MCP gateway (no mcp-gateway template or binary), so the gateway would not start. Create the sandbox without mcp and run the MCP servers you need inside it.',
    })
    expect(create({ iam: { tokens: { aws: { audience: 'a', tokenType: 'JWT-SVID' } } } })).toEqual(
      refused('iam'),
    )
    expect(create({ network: { egressProxy: { address: 'proxy:1080' } } })).toEqual(
      refused('network.egressProxy'),
    )
    const rules = { 'api.example.com': [{ transform: { headers: { 'x-key': 'k' } } }] }
    expect(create({ network: { rules } })).toEqual(refused('network.rules'))
    expect(create({ network: { httpsPorts: [8443] } })).toEqual(refused('network.httpsPorts'))
  })

  it('refuses mcp first, even beside another refused field', () => {
    expect(create({ iam: { tokens: { aws: {} } }, mcp: {} })).toEqual(refused('mcp'))
  })

  it('lets empty values and the supported fields pass', () => {
    expect(
      create({
        timeout: 60,
        autoPause: true,
        autoPauseMemory: false,
        autoResume: { enabled: true },
        secure: true,
        allow_internet_access: false,
        metadata: { a: 'b' },
        envVars: { A: 'B' },
        mcp: null,
        iam: { tokens: {} },
        volumeMounts: [{ name: 'data', path: '/data' }],
        network: {
          allowPublicTraffic: false,
          allowOut: ['1.1.1.1'],
          denyOut: ['0.0.0.0/0'],
          maskRequestHost: 'example.com',
          egressProxy: null,
          rules: {},
          httpsPorts: [],
        },
      }),
    ).toBe('accepted')
  })
})

describe('network update fields Sandbar cannot honour', () => {
  it('refuses an egress proxy and transform rules, and passes the rest', () => {
    expect(update({ egressProxy: { address: 'proxy:1080' } })).toEqual(refused('egressProxy'))
    expect(update({ rules: { '*.example.com': [{}] } })).toEqual(refused('rules'))
    expect(
      update({ allowOut: ['1.1.1.1'], denyOut: ['0.0.0.0/0'], egressProxy: null, rules: {} }),
    ).toBe('accepted')
  })
})
