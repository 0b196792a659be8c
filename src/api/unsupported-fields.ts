import { apiErrors } from './errors.js'
import type { NetworkUpdate, NewSandbox } from './schemas/sandbox-requests.js'

/** A request field Sandbar cannot honour: when a body asks for it, and what to tell the user. */
interface FieldRefusal<Body> {
  /** The field as the wire names it, and the SDK option it comes from where they differ. */
  field: string
  asked: (body: Body) => boolean
  /** What Sandbar lacks, and what to do instead. */
  reason: string
}

const nonEmpty = (value: readonly unknown[] | Record<string, unknown> | null | undefined) =>
  value !== null && value !== undefined && Object.keys(value).length > 0

const NO_EGRESS_PROXY = 'it has no egress proxy'

/**
 * `NewSandbox` fields (§1.3, 2.51 addendum) that Sandbar would otherwise store and not act on,
 * so a user would believe they hold: the MCP gateway would fail inside the sandbox. The first
 * asked for is refused with a 400 naming it. Empty values ask for nothing and pass.
 */
const CREATE_REFUSALS: readonly FieldRefusal<NewSandbox>[] = [
  {
    field: 'mcp',
    asked: (body) => body.mcp !== null && body.mcp !== undefined,
    reason:
      'it has no MCP gateway (no mcp-gateway template or binary), so the gateway would not start. Create the sandbox without mcp and run the MCP servers you need inside it.',
  },
  {
    field: 'iam',
    asked: (body) => nonEmpty(body.iam?.tokens),
    reason: 'it cannot mint workload identity tokens. Create the sandbox without iam tokens.',
  },
  {
    field: 'network.egressProxy',
    asked: (body) => body.network?.egressProxy !== null && body.network?.egressProxy !== undefined,
    reason: `${NO_EGRESS_PROXY} to tunnel the sandbox's traffic through. Create the sandbox without egressProxy.`,
  },
  {
    field: 'network.rules',
    asked: (body) => nonEmpty(body.network?.rules),
    reason: `${NO_EGRESS_PROXY} to apply per-domain transforms to outgoing requests. Create the sandbox without rules, and give the sandbox credentials as envs instead.`,
  },
  {
    field: 'network.httpsPorts',
    asked: (body) => nonEmpty(body.network?.httpsPorts),
    reason:
      'its proxy reaches sandbox ports over plain HTTP only. Serve plain HTTP on those ports; the proxy serves clients HTTPS itself.',
  },
]

/** `SandboxNetworkUpdateConfig` fields (§1.3) Sandbar cannot act on. */
const NETWORK_UPDATE_REFUSALS: readonly FieldRefusal<NetworkUpdate>[] = [
  {
    field: 'egressProxy',
    asked: (body) => body.egressProxy !== null && body.egressProxy !== undefined,
    reason: `${NO_EGRESS_PROXY} to tunnel the sandbox's traffic through. Update the network without egressProxy.`,
  },
  {
    field: 'rules',
    asked: (body) => nonEmpty(body.rules),
    reason: `${NO_EGRESS_PROXY} to apply per-domain transforms to outgoing requests. Update the network without rules.`,
  },
]

/** Throws the 400 for the first field of a create body Sandbar cannot honour. */
export function refuseUnsupportedCreateFields(body: NewSandbox): void {
  refuseFirst(CREATE_REFUSALS, body)
}

/** Throws the 400 for the first field of a network update Sandbar cannot honour. */
export function refuseUnsupportedNetworkFields(body: NetworkUpdate): void {
  refuseFirst(NETWORK_UPDATE_REFUSALS, body)
}

function refuseFirst<Body>(refusals: readonly FieldRefusal<Body>[], body: Body): void {
  const refused = refusals.find((refusal) => refusal.asked(body))
  if (refused !== undefined) throw apiErrors.unsupportedField(refused.field, refused.reason)
}
