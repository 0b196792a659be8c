import { writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { readFileIfExists } from '../path-exists.js'
import { cpuWeightFile } from './parent-cgroup.js'

/** A sandbox's CPU weight file, and the value its runtime wrote there for the sandbox's size. */
export interface CpuWeight {
  file: string
  value: string
}

/** The lowest weight each file takes. */
const LOWEST: Record<string, string> = { 'cpu.shares': '2', 'cpu.weight': '1' }

/**
 * Puts a warm pool's sandbox at the lowest CPU weight while it boots and waits, so that under
 * contention running sandboxes come first (issue 13); without contention it changes nothing.
 * Returns what `restoreCpuWeight` puts back when a client claims it, read from the file rather
 * than computed, since runtimes convert OCI shares to v2 weights each by its own formula.
 * Undefined where the runtime made no such file (gVisor keeps its cgroups to itself).
 */
export async function lowerCpuWeight(cgroupPath: string): Promise<CpuWeight | undefined> {
  const file = await cpuWeightFile(cgroupPath)
  const value = await readFileIfExists(file)
  if (value === undefined) return undefined
  await writeFile(file, LOWEST[path.basename(file)] ?? '')
  return { file, value: value.trim() }
}

/** Synchronous: it is on a claim's critical path, and the kernel takes the write at once. */
export async function restoreCpuWeight(weight: CpuWeight): Promise<void> {
  writeFileSync(weight.file, weight.value)
}
