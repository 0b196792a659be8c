import {
  ALL_TRAFFIC,
  type EgressPolicy,
  EgressPolicyError,
  findUnreachableEntry,
  parseEgressPolicy,
  type UnreachableNetwork,
} from '../agent/index.js'
import type { Sandbox } from '../store/index.js'
import { apiErrors } from './errors.js'

/** The egress lists of create's `network` and of `SandboxNetworkUpdateConfig` (§1.3). */
export interface EgressRequest {
  allowOut?: string[]
  denyOut?: string[]
  allow_internet_access?: boolean
}

/**
 * The policy the agent enforces, validated at the edge so a bad entry is the contract's 400
 * (§1.4) rather than an agent failure. §4.5: `allow_internet_access: false` makes the denied
 * list exactly `[ALL_TRAFFIC]` and keeps the allowed entries.
 */
export function checkedEgressPolicy(request: EgressRequest): EgressPolicy {
  const allowOut = request.allowOut ?? []
  const requestedDeny = request.denyOut ?? []
  rethrowAsApiError(() => parseEgressPolicy({ allowOut: [], denyOut: requestedDeny }), false)
  const denyOut = request.allow_internet_access === false ? [ALL_TRAFFIC] : requestedDeny
  rethrowAsApiError(() => parseEgressPolicy({ allowOut, denyOut }), denyOut.includes(ALL_TRAFFIC))
  return { allowOut, denyOut }
}

/** The policy of a stored sandbox: what it was created or last updated with. */
export function storedEgressPolicy(
  sandbox: Pick<Sandbox, 'network' | 'allowInternetAccess'>,
): EgressPolicy {
  return checkedEgressPolicy({
    allowOut: sandbox.network.allowOut,
    denyOut: sandbox.network.denyOut,
    allow_internet_access: sandbox.allowInternetAccess ?? undefined,
  })
}

/**
 * Refuses allowOut entries overlapping the address pool or the host's addresses (where the
 * api and proxy listen): the agent drops that traffic before any allow rule, so such an entry
 * could only ever be an attempt on another sandbox or the host, and the client hears why.
 * `ALL_TRAFFIC` passes (closed-networks.ts). denyOut entries may overlap them: they only
 * take away.
 */
export function refuseUnreachable(
  policy: EgressPolicy,
  unreachable: readonly UnreachableNetwork[],
): EgressPolicy {
  const found = findUnreachableEntry(policy.allowOut, unreachable)
  if (found !== undefined) throw apiErrors.unreachableAllowedEntry(found)
  return policy
}

/**
 * §1.4: a bad denyOut entry is `invalid denied CIDR <x>`; a non-IP allowOut entry is a domain,
 * which needs ALL_TRAFFIC denied — and with it, Sandbar still cannot filter by domain.
 */
function rethrowAsApiError(parse: () => unknown, deniesAll: boolean): void {
  try {
    parse()
  } catch (error) {
    if (!(error instanceof EgressPolicyError)) throw error
    if (error.list === 'denyOut') throw apiErrors.invalidDeniedCIDR(error.entry)
    if (!deniesAll) throw apiErrors.domainsNeedDenyAll()
    throw apiErrors.unsupportedAllowedEntry(error.message)
  }
}
