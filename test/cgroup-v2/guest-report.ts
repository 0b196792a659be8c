import { z } from 'zod'

/** Vitest's JSON reporter output, the fields read here. */
const vitestResultSchema = z.object({
  numPassedTests: z.number(),
  numFailedTests: z.number(),
  numPendingTests: z.number(),
  testResults: z.array(z.object({ name: z.string(), status: z.string() })),
})

const cgroupModeSchema = z.object({ kind: z.enum(['v1', 'v2', 'hybrid']) })

export interface GuestReport {
  /** The guest's /proc/self/mountinfo lines of cgroup and cgroup2 file systems. */
  cgroupMounts: string[]
  /** The cgroup mode the agent's own detection saw in the guest. */
  cgroupMode: z.infer<typeof cgroupModeSchema>
  vitestExitCode: number
  vitest: z.infer<typeof vitestResultSchema>
  /** Cgroups, netns, nft tables, mounts and sbt- temp files left after the tests. */
  leftovers: string[]
  /** The guest wrote its last section: it got as far as powering off. */
  complete: boolean
}

/**
 * Parses what guest-stage2.sh wrote on ttyS1: sections that each start with a `--- <name>`
 * line. A serial port turns "\n" into "\r\n", hence the trimming.
 */
export function parseGuestReport(text: string): GuestReport {
  const sections = new Map<string, string[]>()
  let current: string[] | undefined
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/\r$/, '')
    const header = /^--- (\S+)$/.exec(line)
    if (header?.[1] !== undefined) {
      current = []
      sections.set(header[1], current)
    } else if (current !== undefined && line !== '') current.push(line)
  }
  const section = (name: string): string[] => {
    const lines = sections.get(name)
    if (lines === undefined) throw new Error(`the guest's report has no ${name} section`)
    return lines
  }
  return {
    cgroupMounts: section('cgroup-mounts'),
    cgroupMode: cgroupModeSchema.parse(JSON.parse(section('cgroup-mode').join('\n'))),
    vitestExitCode: exitCode(section('vitest-exit')),
    vitest: vitestResultSchema.parse(JSON.parse(section('vitest-json').join('\n'))),
    leftovers: section('leftovers'),
    complete: sections.has('end'),
  }
}

function exitCode(lines: string[]): number {
  const text = lines.join('')
  if (!/^\d+$/.test(text)) throw new Error(`the guest's report has no Vitest exit code: "${text}"`)
  return Number(text)
}
