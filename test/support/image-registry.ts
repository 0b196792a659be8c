import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** A user the private registry knows. */
export interface RegistryCredentials {
  username: string
  password: string
}

/** A manifest as the registry serves it, and the digest it names it by. */
export interface ServedManifest {
  digest: string
  mediaType: string
  body: string
}

export interface PushOptions {
  all?: boolean
  format?: 'oci' | 'v2s2'
}

/** Debian's `docker-registry` (distribution 2.8) on 127.0.0.1, started for a test. */
export interface ImageRegistry {
  /** `127.0.0.1:PORT`, the host part of image references. */
  host: string
  /** Set when the registry refuses anonymous access (htpasswd). */
  credentials?: RegistryCredentials
  /**
   * Pushes the image `layout:tag` of an OCI layout as `name` (`repo:tag`); `all`: an index and
   * every image in it; `format: 'v2s2'`: as Docker's manifest format instead of OCI's.
   */
  push(layout: string, tag: string, name: string, options?: PushOptions): Promise<string>
  /** The manifest `name:reference` as any client gets it, with the registry's digest header. */
  manifest(name: string, reference: string): Promise<ServedManifest>
  /** Stops the registry (its PID only) and removes its storage, config and logs. */
  stop(): Promise<void>
}

const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
]

/**
 * Starts a registry with filesystem storage in a temp dir, on a free loopback port; with
 * `credentials`, behind htpasswd auth (bcrypt, as distribution requires).
 */
export async function startImageRegistry(
  options: { credentials?: RegistryCredentials } = {},
): Promise<ImageRegistry> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sbt-registry-'))
  let child: ChildProcess | undefined
  try {
    const port = await freePort()
    const host = `127.0.0.1:${port}`
    const config = [
      'version: 0.1',
      'log: { level: info }',
      `storage: { filesystem: { rootdirectory: ${path.join(dir, 'storage')} } }`,
      `http: { addr: "${host}" }`,
    ]
    const { credentials } = options
    if (credentials !== undefined) {
      const { stdout } = await run('htpasswd', ['-Bbn', credentials.username, credentials.password])
      await writeFile(path.join(dir, 'htpasswd'), stdout, { mode: 0o600 })
      config.push(
        `auth: { htpasswd: { realm: sandbar-test, path: ${path.join(dir, 'htpasswd')} } }`,
      )
    }
    await writeFile(path.join(dir, 'config.yml'), `${config.join('\n')}\n`)
    const log = await open(path.join(dir, 'registry.log'), 'a')
    child = spawn('docker-registry', ['serve', path.join(dir, 'config.yml')], {
      stdio: ['ignore', log.fd, log.fd],
    })
    await log.close()
    await waitUntilServing(host, child, path.join(dir, 'registry.log'))
    const started = child
    const authHeader =
      credentials === undefined
        ? undefined
        : `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
    return {
      host,
      ...(credentials === undefined ? {} : { credentials }),
      push: (layout, tag, name, pushOptions = {}) =>
        pushImage(dir, host, credentials, layout, tag, name, pushOptions),
      manifest: async (name, reference) => {
        const response = await fetch(`http://${host}/v2/${name}/manifests/${reference}`, {
          headers: {
            accept: MANIFEST_TYPES.join(', '),
            ...(authHeader === undefined ? {} : { authorization: authHeader }),
          },
        })
        if (!response.ok) throw new Error(`manifest ${name}:${reference}: ${response.status}`)
        return {
          digest: response.headers.get('docker-content-digest') ?? '',
          mediaType: response.headers.get('content-type') ?? '',
          body: await response.text(),
        }
      },
      stop: async () => {
        await stopChild(started)
        await rm(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    if (child !== undefined) await stopChild(child)
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}

async function pushImage(
  dir: string,
  host: string,
  credentials: RegistryCredentials | undefined,
  layout: string,
  tag: string,
  name: string,
  options: PushOptions,
): Promise<string> {
  const authArgs: string[] = []
  if (credentials !== undefined) {
    const authFile = path.join(dir, 'push-auth.json')
    const auth = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')
    await writeFile(authFile, JSON.stringify({ auths: { [host]: { auth } } }), { mode: 0o600 })
    authArgs.push('--dest-authfile', authFile)
  }
  const target = `${host}/${name}`
  await run('skopeo', [
    'copy',
    ...(options.all === true ? ['--all'] : []),
    ...(options.format === undefined ? [] : ['--format', options.format]),
    ...authArgs,
    '--dest-tls-verify=false',
    `oci:${layout}:${tag}`,
    `docker://${target}`,
  ])
  return target
}

/** A port nothing listens on right now: the kernel's pick for a listener, then closed. */
async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  await once(server, 'close')
  if (address === null || typeof address === 'string') throw new Error('no port assigned')
  return address.port
}

/** Polls `/v2/` until the registry answers (any status), failing early if it exits. */
async function waitUntilServing(host: string, child: ChildProcess, logFile: string): Promise<void> {
  let exited = false
  child.once('exit', () => {
    exited = true
  })
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline && !exited) {
    const answered = await fetch(`http://${host}/v2/`).then(
      () => true,
      () => false,
    )
    if (answered) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const log = await readFile(logFile, 'utf8').catch(() => '')
  throw new Error(`docker-registry did not start on ${host}:\n${log}`)
}

/** SIGTERM to the registry's own PID, SIGKILL if it lingers. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}
