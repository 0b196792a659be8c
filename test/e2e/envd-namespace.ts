import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'

/** Debian's `tini` package; scripts/setup.sh installs it. */
const TINI = '/usr/bin/tini'

/** The test accounts: `user` (uid 1000) with a supplementary group, as in the base template. */
export const TEST_USER = { name: 'user', uid: 1000, gid: 1000, home: '/home/user', extraGid: 1500 }

const passwd = `root:x:0:0:root:/root:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
user:x:1000:1000::/home/user:/bin/bash
`
const group = `root:x:0:
users:x:100:
nogroup:x:65534:
user:x:1000:
sbtgroup:x:1500:user
`

/**
 * Ports of the envds that single e2e files start for themselves, one each since files run in
 * parallel. They sit below Linux's ephemeral range (32768–60999 by default), from which the
 * kernel picks the local port of every outgoing connection on the host: a port up there can
 * be taken at any moment, as a CI run once saw on 49994. (The shared envd must stay on the
 * SDK's debug port, 49983, for the oldest SDK; `assertPortFree` waits that out.)
 */
export const ENVD_TEST_PORTS = {
  signedUrl: 31993,
  auth: 31994,
  http: 31995,
  streaming: 31996,
} as const

/** One envd running in its own mount and PID namespaces, seen from the test's side. */
export interface NamespacedEnvd {
  /** Base URL, e.g. `http://localhost:49983`. */
  url: string
  /** Host directory that the namespace sees as `/home` (so `<root>/home/user/...`). */
  homeOnHost: string
  stop(): Promise<void>
}

/**
 * Starts the built envd bundle as root in private mount and PID namespaces where `/etc/passwd`,
 * `/etc/group`, `/home` and `/root` are the test's own, so the host's accounts and home
 * directories are never touched. When the test stops it, the kernel ends every process the
 * envd started (the PID namespace dies with its first process).
 */
export async function startNamespacedEnvd(port: number, bundle: string): Promise<NamespacedEnvd> {
  await assertPortFree(port)
  const dir = await mkdtemp('/tmp/sbt-envd-')
  await writeFile(path.join(dir, 'passwd'), passwd)
  await writeFile(path.join(dir, 'group'), group)
  const home = path.join(dir, 'home')
  await mkdir(path.join(home, 'user'), { recursive: true })
  await chown(path.join(home, 'user'), TEST_USER.uid, TEST_USER.gid)
  await mkdir(path.join(dir, 'root'), { mode: 0o700 })

  // Fixed script; every variable part arrives as a positional argument, never interpolated.
  // tini is PID 1, as in a sandbox: it reaps the orphans of killed commands, which node does
  // not. envd is its only child. It shares the host's network, so it listens on 127.0.0.1
  // only (where `localhost` resolves), leaving other loopback addresses to other tests.
  const script =
    'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && ' +
    'mount --bind "$3" /home && mount --bind "$4" /root && exec "$5" -- "$6" "$7" --port "$8" --host 127.0.0.1'
  const child = spawn(
    'unshare',
    [
      '--mount',
      '--propagation=private',
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--',
      '/bin/sh',
      '-c',
      script,
      'sh',
      path.join(dir, 'passwd'),
      path.join(dir, 'group'),
      home,
      path.join(dir, 'root'),
      TINI,
      process.execPath,
      bundle,
      String(port),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, SANDBAR_LOG_LEVEL: 'warn' } },
  )
  const url = `http://localhost:${port}`
  const stop = async (): Promise<void> => {
    await stopChild(child)
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await waitForEnvdHealth(url, child)
  } catch (error) {
    await stop()
    throw error
  }
  return { url, homeOnHost: home, stop }
}

/**
 * Another envd on the port would answer /health in place of ours: refuse to start instead.
 * A port in the ephemeral range may be held for a moment by some outgoing connection, so a
 * taken port gets a few seconds to come free first.
 */
async function assertPortFree(port: number): Promise<void> {
  const deadline = Date.now() + PORT_WAIT_MS
  for (;;) {
    const error = await listenOnce(port)
    if (error === undefined) return
    if (Date.now() >= deadline) {
      throw new Error(`port ${port} is taken; SANDBAR_TEST_ENVD_PORT picks another`, {
        cause: error,
      })
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const PORT_WAIT_MS = 10_000

/** Listens on the port and closes again: undefined when that worked, the error otherwise. */
async function listenOnce(port: number): Promise<Error | undefined> {
  const probe = createServer()
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject)
      probe.listen(port, '127.0.0.1', resolve)
    })
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
  await new Promise((resolve) => probe.close(resolve))
  return undefined
}

/** Polls envd's `/health` at `url` until it answers 204; rejects once `child` exits first. */
export async function waitForEnvdHealth(url: string, child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`envd exited with ${code} before answering /health`)
  })
  const healthy = (async () => {
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline) {
      const ok = await fetch(`${url}/health`).then(
        (r) => r.status === 204,
        () => false,
      )
      if (ok) return
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error(`envd at ${url} did not answer /health within 15 s`)
  })()
  await Promise.race([healthy, exited])
}

/**
 * Ends the namespace: `unshare` dies, `--kill-child` sends SIGKILL to its PID 1, and with it
 * every process in the namespace. `unshare --fork` ignores SIGTERM, so nothing gentler helps.
 */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
}

/** Configures an envd the way the control plane does after boot (wire contract §3.3 `/init`). */
export async function initEnvd(
  url: string,
  body: { accessToken?: string; envVars?: Record<string, string> } = {},
): Promise<void> {
  const response = await fetch(`${url}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      defaultUser: TEST_USER.name,
      defaultWorkdir: TEST_USER.home,
      timestamp: new Date().toISOString(),
      ...body,
    }),
  })
  if (response.status !== 204) {
    throw new Error(`/init answered ${response.status}: ${await response.text()}`)
  }
}
