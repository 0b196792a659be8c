import { randomBytes } from 'node:crypto'
import { Sandbox } from 'e2b'

/**
 * An SDK sandbox for one envd reached directly at `url`, carrying an access token the way a
 * sandbox returned by `Sandbox.create()` on a real control plane does. The SDK keeps this
 * constructor internal, so this is the one place a test reaches for it.
 */
export function sandboxForEnvd(
  url: string,
  envdAccessToken?: string,
  sandboxID = `i${randomBytes(10).toString('hex')}`,
): Sandbox {
  const SandboxClass = Sandbox as unknown as new (opts: Record<string, unknown>) => Sandbox
  return new SandboxClass({
    sandboxId: sandboxID,
    envdVersion: '0.6.13',
    envdAccessToken,
    debug: true,
    sandboxUrl: url,
  })
}
