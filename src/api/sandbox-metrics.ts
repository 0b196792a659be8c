import type { SandboxMetricSample } from '../store/index.js'

/** Wire contract §1.3 `SandboxMetric`: a stored sample, its time given both ways. */
export type SandboxMetric = Omit<SandboxMetricSample, 'timestamp'> & {
  timestamp: string
  timestampUnix: number
}

/** A stored sample as the contract's `SandboxMetric`. */
export function metricReply(sample: SandboxMetricSample): SandboxMetric {
  const { timestamp, ...figures } = sample
  return {
    timestamp: timestamp.toISOString(),
    timestampUnix: Math.floor(timestamp.getTime() / 1000),
    ...figures,
  }
}
