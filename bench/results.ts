import { execFileSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { RecordedLine } from './stats.js'

/** Where a run's figures land: JSON for tools (git-ignored), Markdown for readers. */
const JSON_FILE = 'bench/results/latest.json'
const MARKDOWN_FILE = 'docs/benchmarks.md'

interface Machine {
  cpu: string
  cores: number
  memoryGiB: number
  kernel: string
  /** The 1-minute load average as the run started: other work on the host shows here. */
  loadAtStart: number
}

interface RunInfo {
  date: string
  commit: string
  machine: Machine
  sections: string[]
}

/** The host the figures come from, as the document names it. */
export function describeMachine(): Machine {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    kernel: os.release(),
    loadAtStart: os.loadavg()[0] ?? Number.NaN,
  }
}

/** The checked-out commit, marked when the work tree differs from it. */
function commitHash(repo: string): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo }).toString().trim()
  return git('status', '--porcelain', '--untracked-files=no') === ''
    ? git('rev-parse', 'HEAD')
    : `${git('rev-parse', 'HEAD')} (with uncommitted changes)`
}

/**
 * Reads the lines the sections recorded (one JSON object a line in `linesFile`) and writes
 * them with the run's date, commit and machine to the JSON file and to docs/benchmarks.md.
 */
export async function writeResults(
  repo: string,
  linesFile: string,
  machine: Machine,
  sections: string[],
): Promise<void> {
  const text = await readFile(linesFile, 'utf8').catch(() => '')
  const lines = text
    .split('\n')
    .filter((line) => line !== '')
    // JSON has no NaN: a ratio without a floor (a peer not installed) comes back as null.
    .map((line) => JSON.parse(line) as Omit<RecordedLine, 'ratio'> & { ratio: number | null })
    .map((line) => ({ ...line, ratio: line.ratio ?? Number.NaN }))
  const run: RunInfo = {
    date: new Date().toISOString(),
    commit: commitHash(repo),
    machine,
    sections,
  }
  await mkdir(path.join(repo, path.dirname(JSON_FILE)), { recursive: true })
  await writeFile(path.join(repo, JSON_FILE), `${JSON.stringify({ ...run, lines }, null, 2)}\n`)
  await writeFile(path.join(repo, MARKDOWN_FILE), markdown(run, lines))
}

function markdown(run: RunInfo, lines: RecordedLine[]): string {
  const { machine } = run
  const table = (rows: RecordedLine[]) =>
    alignedTable(
      ['', 'what', 'figure', 'floor, same run', 'ratio', 'target'],
      rows.map((line) => [
        line.ok ? 'ok' : 'MISS',
        line.name,
        line.figure,
        line.floor,
        Number.isNaN(line.ratio) ? '—' : line.ratio.toFixed(2),
        line.target,
      ]),
    )
  const user = lines.filter((line) => !line.diagnostic)
  const diagnostic = lines.filter((line) => line.diagnostic)
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench`, which starts `sandbar serve` itself and drives it only through',
    'the official `e2b` SDK with its defaults. Each figure stands beside a floor measured in the',
    'same run from outside Sandbar, so ratios hold on a busy machine; absolute figures do not.',
    '',
    `- date: ${run.date}`,
    `- commit: ${run.commit}`,
    `- machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Linux ${machine.kernel}`,
    `- load average at start: ${machine.loadAtStart.toFixed(2)} (other work on the host slows every figure)`,
    `- sections: ${run.sections.join(', ')}`,
    '',
    '## What an SDK user sees',
    '',
    ...(user.length === 0 ? ['(the `user` section did not run)'] : table(user)),
    '',
    '## Diagnostics: Sandbar’s own parts (agent, envd) beside their floors',
    '',
    ...(diagnostic.length === 0 ? ['(no diagnostic section ran)'] : table(diagnostic)),
    '',
  ].join('\n')
}

/** A Markdown table with its columns padded, as the repository's formatter writes them. */
function alignedTable(header: string[], rows: string[][]): string[] {
  const cells = [header, ...rows].map((row) => row.map((text) => text.replaceAll('|', '\\|')))
  const width = (text: string) => [...text].length
  const widths = header.map((_, column) =>
    Math.max(3, ...cells.map((row) => width(row[column] ?? ''))),
  )
  const pad = (text: string, w: number) => text + ' '.repeat(w - width(text))
  const line = (row: string[]) =>
    `| ${widths.map((w, column) => pad(row[column] ?? '', w)).join(' | ')} |`
  const [head, ...body] = cells
  return [line(head ?? []), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)]
}
