import { chmod, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Store } from '../store/index.js'

/** What a client needs to reach this service, besides the API key. */
export interface ClientSettings {
  /** `E2B_DOMAIN`: the SDK calls `https://api.<domain>` and `https://<port>-<id>.<domain>`. */
  domain: string
  /** `NODE_EXTRA_CA_CERTS`: the authority of Sandbar's own certificate, when it made one. */
  caFile?: string | undefined
}

/** `<data>/client.env`, readable by root alone: the settings and the API key. */
export function clientEnvPath(dataDir: string): string {
  return path.join(dataDir, 'client.env')
}

/**
 * Writes `<data>/client.env` (0600) for `set -a; . client.env`: the current settings, which
 * follow the flags of this start, and the API key. The key is made on the first start, when
 * the store has none to give (it keeps only hashes), and kept from the file after that.
 * Returns the key when this call made it, which is the one time it may be printed: service
 * logs keep what a service prints, and the key must not outlive its first showing there.
 */
export async function writeClientEnv(
  store: Store,
  dataDir: string,
  settings: ClientSettings,
): Promise<{ text: string; newKey?: string }> {
  const file = clientEnvPath(dataDir)
  const existing = await readFile(file, 'utf8').catch(() => '')
  const kept = /^E2B_API_KEY=(\S+)$/m.exec(existing)?.[1]
  const newKey = kept === undefined ? await createKey(store) : undefined
  const lines = [
    `E2B_DOMAIN=${settings.domain}`,
    // The SDK finds the volume content API here, not by E2B_API_URL (wave2-contracts §2.3):
    // the API itself, which the proxy also serves as api.<domain>.
    `E2B_VOLUME_API_URL=https://api.${settings.domain}`,
    `E2B_API_KEY=${kept ?? newKey}`,
  ]
  if (settings.caFile !== undefined) lines.push(`NODE_EXTRA_CA_CERTS=${settings.caFile}`)
  const text = `${lines.join('\n')}\n`
  await writeFile(file, text, { mode: 0o600 })
  // A file of an older install, or one copied with looser modes, is root's alone again.
  await chmod(file, 0o600)
  return newKey === undefined ? { text } : { text, newKey }
}

async function createKey(store: Store): Promise<string> {
  const { team } = await store.ensureFirstTeam()
  const { key } = await store.createApiKey(team.id, 'default')
  return key
}

/**
 * What a person needs to point the e2b SDK and CLI at this service: every setting when this
 * start made the key, else the file that holds them (readable by root alone).
 */
export function readyMessage(
  dataDir: string,
  ports: { api: number; proxy: number },
  settings: ClientSettings,
  written: { text: string; newKey?: string },
): string {
  const file = clientEnvPath(dataDir)
  const how =
    written.newKey === undefined
      ? [`Point the e2b SDK and CLI at it with the settings in ${file}:`]
      : [
          'Point the e2b SDK and CLI at it (the API key is shown this once):',
          ...written.text
            .trim()
            .split('\n')
            .map((line) => `  export ${line}`),
          'or load the same variables from the file:',
        ]
  return [
    `Sandbar is serving the E2B API on port ${ports.api}, and sandboxes on port ${ports.proxy} (HTTP and HTTPS).`,
    `Sandbox port 8000 is https://8000-<sandboxID>.${settings.domain} (and http://); the API is also https://api.${settings.domain}.`,
    ...how,
    `  set -a; . ${file}; set +a`,
    'then, for example:',
    `  node -e "require('e2b').Sandbox.create().then(async s => { console.log((await s.commands.run('uname -a')).stdout); await s.kill() })"`,
  ].join('\n')
}
