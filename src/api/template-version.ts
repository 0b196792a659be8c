import type { BuildRequest } from '../builder/index.js'

const SDK_AGENT = /\be2b-(?:js|python)-sdk\/(\d+)\.(\d+)\.(\d+)/

/**
 * The template version a build gets from the SDK that asks for it (§1.4): SDKs before 2.3.0
 * build `v2.0.0` templates, newer ones and other clients `v2.1.0`.
 */
export function templateVersion(userAgent: string | undefined): BuildRequest['version'] {
  const match = userAgent === undefined ? null : SDK_AGENT.exec(userAgent)
  if (match === null) return 'v2.1.0'
  const [major, minor] = [Number(match[1]), Number(match[2])]
  return major < 2 || (major === 2 && minor < 3) ? 'v2.0.0' : 'v2.1.0'
}
