import { templateErrors } from './template-errors.js'

/** The sizes a template's builds and sandboxes get (§1.4 `POST /v3/templates`). */
export interface TemplateSizes {
  cpuCount: number
  memoryMB: number
  diskSizeMB: number
}

/** The team maxima builds are held to; E2B's defaults (§1.4). */
export interface TemplateSizeLimits {
  maxCpuCount: number
  maxMemoryMB: number
  /** Every build's disk: Sandbar sizes none per request (the contract has no disk field). */
  diskSizeMB: number
}

export const DEFAULT_SIZE_LIMITS: TemplateSizeLimits = {
  maxCpuCount: 8,
  maxMemoryMB: 8192,
  diskSizeMB: 512,
}

const DEFAULT_CPU_COUNT = 2
const DEFAULT_MEMORY_MB = 1024
const MIN_MEMORY_MB = 128

/**
 * The sizes a build request asks for, defaults filled in, or the contract's 400: CPU 1 or
 * even and at most the team's maximum; memory at least 128 MiB, even, at most the maximum.
 */
export function checkTemplateSizes(
  requested: { cpuCount?: number; memoryMB?: number },
  limits: TemplateSizeLimits,
): TemplateSizes {
  const cpuCount = requested.cpuCount ?? DEFAULT_CPU_COUNT
  const memoryMB = requested.memoryMB ?? DEFAULT_MEMORY_MB
  if (cpuCount < 1) throw templateErrors.cpuTooLow()
  if (cpuCount !== 1 && cpuCount % 2 !== 0) throw templateErrors.cpuNotEven()
  if (cpuCount > limits.maxCpuCount) throw templateErrors.cpuTooHigh(limits.maxCpuCount)
  if (memoryMB < MIN_MEMORY_MB) throw templateErrors.memoryTooLow(MIN_MEMORY_MB)
  if (memoryMB % 2 !== 0) throw templateErrors.memoryNotEven()
  if (memoryMB > limits.maxMemoryMB) throw templateErrors.memoryTooHigh(limits.maxMemoryMB)
  return { cpuCount, memoryMB, diskSizeMB: limits.diskSizeMB }
}
