import { execFile } from 'node:child_process'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'

/** Where a certificate for `*.<domain>` and its key live, and who vouches for it. */
export interface CertificateFiles {
  certFile: string
  keyFile: string
  /** The authority a client must trust (`NODE_EXTRA_CA_CERTS`); absent for a public CA's certificate. */
  caFile?: string
}

const CA_FILE = 'ca.pem'
const CERT_FILE = 'server.pem'
const KEY_FILE = 'server.key'
const VALID_DAYS = 3650
/** A certificate this close to its end is made anew at start. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000

/**
 * Sandbar's own certificate for `<hostname>` and `*.<hostname>` under `dir`, made at the first
 * start and again when the domain changes or it nears its end. It is signed by an authority
 * made with it whose key is deleted at once, and whose name constraints admit only names
 * under `<hostname>`: a client that trusts the authority trusts this one certificate and
 * nothing else, even if someone later reads every file here.
 */
export async function ensureLocalCertificate(
  dir: string,
  hostname: string,
): Promise<CertificateFiles> {
  const files = {
    certFile: path.join(dir, CERT_FILE),
    keyFile: path.join(dir, KEY_FILE),
    caFile: path.join(dir, CA_FILE),
  }
  if (await isUsable(files, hostname)) return files
  await mkdir(dir, { recursive: true, mode: 0o755 })
  const work = await mkdtemp(path.join(dir, '.new-'))
  try {
    await makeCertificate(work, hostname)
    // The key last: a crash in between leaves a pair that does not match, which isUsable rejects.
    await rename(path.join(work, CA_FILE), files.caFile)
    await rename(path.join(work, CERT_FILE), files.certFile)
    await rename(path.join(work, KEY_FILE), files.keyFile)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  return files
}

async function isUsable(files: Required<CertificateFiles>, hostname: string): Promise<boolean> {
  try {
    const [ca, cert, key] = await Promise.all([
      readFile(files.caFile),
      readFile(files.certFile),
      readFile(files.keyFile),
    ])
    const certificate = new X509Certificate(cert)
    return (
      certificate.checkHost(`api.${hostname}`) !== undefined &&
      certificate.checkIssued(new X509Certificate(ca)) &&
      certificate.checkPrivateKey(createPrivateKey(key)) &&
      Date.parse(certificate.validTo) - Date.now() > RENEW_BEFORE_MS
    )
  } catch {
    return false
  }
}

/** The authority, then the server certificate it signs; both with OpenSSL, P-256 keys. */
async function makeCertificate(work: string, hostname: string): Promise<void> {
  const run = promisify(execFile)
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-noenc']
  const caKey = path.join(work, 'ca.key')
  await run('openssl', [
    ...['req', '-x509', ...newKey, '-keyout', caKey, '-out', path.join(work, CA_FILE)],
    ...['-days', String(VALID_DAYS), '-subj', `/CN=Sandbar local authority for ${hostname}`],
    ...['-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0'],
    ...['-addext', 'keyUsage=critical,keyCertSign'],
    ...['-addext', `nameConstraints=critical,permitted;DNS:${hostname}`],
  ])
  await run('openssl', [
    ...['req', '-x509', '-CA', path.join(work, CA_FILE), '-CAkey', caKey, ...newKey],
    ...['-keyout', path.join(work, KEY_FILE), '-out', path.join(work, CERT_FILE)],
    ...['-days', String(VALID_DAYS), '-subj', `/CN=${hostname}`],
    ...['-addext', `subjectAltName=DNS:${hostname},DNS:*.${hostname}`],
    ...['-addext', 'basicConstraints=critical,CA:FALSE'],
    ...['-addext', 'keyUsage=critical,digitalSignature'],
    ...['-addext', 'extendedKeyUsage=serverAuth'],
  ])
  await rm(caKey)
  await chmod(path.join(work, KEY_FILE), 0o600)
  await chmod(path.join(work, CA_FILE), 0o644)
  await chmod(path.join(work, CERT_FILE), 0o644)
}
