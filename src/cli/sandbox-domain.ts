import { lookup } from 'node:dns/promises'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { type CertificateFiles, ensureLocalCertificate, hostnameOf } from '../proxy/index.js'

/**
 * The domain when none is given: `*.localhost` names resolve to this machine in browsers, curl
 * and (with `libnss-myhostname`, which scripts/setup.sh installs) every program using the C
 * library. Two labels, because TLS clients refuse a wildcard certificate for `*.localhost`.
 */
export const LOCAL_DOMAIN = 'sandbar.localhost'

/**
 * The domain clients use: `--domain` as given, else the local domain with the proxy port
 * unless it is HTTPS's own. The SDK appends the domain to `api.` and `<port>-<id>.` and puts
 * `https://` before it, so a port written into the domain reaches the proxy's port.
 */
export function sandboxDomain(flag: string | undefined, proxyPort: number): string {
  if (flag !== undefined) return flag
  return proxyPort === 443 ? LOCAL_DOMAIN : `${LOCAL_DOMAIN}:${proxyPort}`
}

/** The TLS identity the proxy serves, and the authority a client must trust when it is ours. */
export interface ProxyCertificate {
  cert: Buffer
  key: Buffer
  /** Set when Sandbar made the certificate: clients trust it through this file. */
  caFile?: string | undefined
}

/**
 * The operator's certificate for `*.<domain>` when `--tls-cert`/`--tls-key` name one; else
 * Sandbar's own, kept under `<data>/tls` (local-authority.ts).
 */
export async function proxyCertificate(
  dataDir: string,
  domain: string,
  operator: { certFile?: string | undefined; keyFile?: string | undefined },
): Promise<ProxyCertificate> {
  const files: CertificateFiles =
    operator.certFile !== undefined && operator.keyFile !== undefined
      ? { certFile: operator.certFile, keyFile: operator.keyFile }
      : await ensureLocalCertificate(path.join(dataDir, 'tls'), hostnameOf(domain))
  const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)])
  return { cert, key, caFile: files.caFile }
}

/**
 * A warning when `api.<domain>` does not resolve on this machine, which is what the SDK will
 * ask for first; undefined when it does.
 */
export async function unresolvableDomainWarning(domain: string): Promise<string | undefined> {
  const host = `api.${hostnameOf(domain)}`
  try {
    await lookup(host)
    return undefined
  } catch {
    return host.endsWith('.localhost')
      ? `warning: ${host} does not resolve on this machine, so the SDK cannot reach Sandbar; install libnss-myhostname (scripts/setup.sh does) to resolve *.localhost`
      : `warning: ${host} does not resolve on this machine; point DNS records for ${hostnameOf(domain)} and *.${hostnameOf(domain)} at this host`
  }
}
