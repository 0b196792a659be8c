import { type Result, Sandbox } from '@e2b/code-interpreter'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServeInstance, startServe } from './serve-fixture.js'

// What `runCode` results hold (wave2-contracts §1.5) and the charts read from matplotlib
// figures (§1.9), through `@e2b/code-interpreter` against `sandbar serve`. One sandbox serves
// the file; each test's figures are shown and closed within its own run.

let serve: ServeInstance
let sandbox: Sandbox
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe([], { codeInterpreter: true })
  sandbox = await Sandbox.create(opts())
})

afterAll(async () => {
  try {
    if (sandbox !== undefined) await sandbox.kill()
  } finally {
    const leaks = await serve?.stop()
    expect(leaks).toEqual([])
  }
})

/** Runs python that must not fail, and gives its results. */
async function results(code: string): Promise<Result[]> {
  const execution = await sandbox.runCode(code)
  expect(execution.error).toBeUndefined()
  return execution.results
}

/** The one result of a run that shows one figure: its png, its text and its chart. */
async function chartOf(code: string) {
  const [figure, ...more] = await results(`import matplotlib.pyplot as plt\n${code}\nplt.show()`)
  expect(more).toEqual([])
  expect(figure?.png).toEqual(expect.any(String))
  expect(figure?.text).toMatch(/^<Figure size \d+x\d+ with \d+ Axes>$/)
  expect(figure?.extra).toEqual({})
  // biome-ignore lint/suspicious/noExplicitAny: chart shapes differ per type; tests read fields.
  const chart = figure?.chart as any
  if (chart === undefined) throw new Error('the figure has no chart')
  return chart
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A base64 PNG's width and height, from its IHDR chunk, after checking its signature. */
function pngSize(base64: string | undefined): { width: number; height: number } {
  const bytes = Buffer.from(base64 ?? '', 'base64')
  expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE)
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR')
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
}

describe('results (§1.5)', () => {
  it('carries IPython display objects as html, markdown, svg, latex, json and javascript', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect/></svg>'
    const shown = await results(
      [
        'from IPython.display import display, HTML, Markdown, SVG, Latex, JSON, Javascript',
        "display(HTML('<b>bold</b>'))",
        "display(Markdown('# Title'))",
        `display(SVG('${svg}'))`,
        "display(Latex(r'$\\alpha + \\beta$'))",
        "display(JSON({'a': [1, 2], 'b': None}))",
        "display(Javascript('console.log(1)'))",
      ].join('\n'),
    )
    expect(shown.map((result) => result.formats())).toEqual([
      ['html'],
      ['markdown'],
      ['svg'],
      ['latex'],
      ['json'],
      ['javascript'],
    ])
    const [html, markdown, image, latex, json, javascript] = shown
    expect(html?.html).toBe('<b>bold</b>')
    expect(html?.text).toBe('<IPython.core.display.HTML object>')
    expect(markdown?.markdown).toBe('# Title')
    expect(image?.svg).toBe(svg)
    expect(latex?.latex).toBe('$\\alpha + \\beta$')
    expect(json?.json).toEqual({ a: [1, 2], b: null })
    expect(javascript?.javascript).toBe('console.log(1)')
    expect(shown.every((result) => !result.isMainResult)).toBe(true)
  })

  it('carries pdf and jpeg as base64', async () => {
    const [pdf, jpeg] = await results(
      [
        'import io',
        'from IPython.display import display, Image',
        'from PIL import Image as PILImage',
        'class Report:',
        '    def _repr_pdf_(self):',
        "        return b'%PDF-1.4\\n%sandbar\\n'",
        'display(Report())',
        'buffer = io.BytesIO()',
        "PILImage.new('RGB', (3, 2), 'blue').save(buffer, format='JPEG')",
        "display(Image(data=buffer.getvalue(), format='jpeg'))",
      ].join('\n'),
    )
    expect(Buffer.from(pdf?.pdf ?? '', 'base64').toString('latin1')).toBe('%PDF-1.4\n%sandbar\n')
    // JPEG's start-of-image marker.
    expect([...Buffer.from(jpeg?.jpeg ?? '', 'base64').subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff])
    expect(jpeg?.formats()).toEqual(['jpeg'])
  })

  it('gives a pandas DataFrame as data (column → values), html and text', async () => {
    const [frame] = await results(
      [
        'import pandas as pd',
        'pd.DataFrame({',
        "    'n': [1, 2],",
        "    'f': [1.5, None],",
        "    's': ['x', 'y'],",
        "    'when': pd.to_datetime(['2024-01-02', '2024-03-04 05:06:07']),",
        '})',
      ].join('\n'),
    )
    expect(frame?.isMainResult).toBe(true)
    expect(frame?.data).toEqual({
      n: [1, 2],
      f: [1.5, null],
      s: ['x', 'y'],
      when: ['2024-01-02T00:00:00', '2024-03-04T05:06:07'],
    })
    expect(frame?.html).toContain('<table')
    expect(frame?.text).toContain('2024-03-04 05:06:07')
    expect(frame?.formats()).toEqual(['html', 'data'])
  })

  it('gives plain lists and dicts as json too', async () => {
    const [value] = await results("{'a': [1, 2.5], 'b': None, 'c': 'text'}")
    expect(value?.json).toEqual({ a: [1, 2.5], b: null, c: 'text' })
    expect(value?.text).toBe("{'a': [1, 2.5], 'b': None, 'c': 'text'}")
  })

  it('keeps other MIME types in the raw extra, which the JS SDK does not surface', async () => {
    const [custom] = await results(
      [
        'from IPython.display import display',
        "bundle = {'application/vnd.sandbar.test+json': {'answer': 42}, 'text/plain': 'custom'}",
        'display(bundle, raw=True)',
      ].join('\n'),
    )
    expect(custom?.text).toBe('custom')
    // §1.5: the wire puts unknown keys inside `extra`; `Result.extra` holds only unknown
    // top-level keys, so it is empty, as it is for E2B.
    expect(custom?.extra).toEqual({})
    expect(custom?.formats()).toEqual([])
    expect(custom?.raw.extra).toEqual({ 'application/vnd.sandbar.test+json': { answer: 42 } })
  })

  it('displays PIL images as png: show(), save() to a path, and an image as the value', async () => {
    const [shown, saved, value] = await results(
      [
        'from PIL import Image',
        "image = Image.new('RGB', (7, 5), 'red')",
        'image.show()',
        "image.save('/tmp/red.png')",
        'image',
      ].join('\n'),
    )
    for (const result of [shown, saved, value]) {
      expect(pngSize(result?.png)).toEqual({ width: 7, height: 5 })
      expect(result?.text).toBe('<PIL.Image.Image image mode=RGB size=7x5>')
    }
    expect([shown?.isMainResult, saved?.isMainResult, value?.isMainResult]).toEqual([
      false,
      false,
      true,
    ])
    const size = await sandbox.runCode("import os\nos.path.getsize('/tmp/red.png') > 0")
    expect(size.text).toBe('True')
  })
})

describe('charts (§1.9)', () => {
  it('reads a line chart: title, labels and units, scales, each line and its points', async () => {
    const chart = await chartOf(
      [
        "plt.plot([1, 2, 3], [2, 4, 8], label='growth')",
        'plt.plot([1, 2, 3], [1, 1, 1])',
        "plt.title('Growth')",
        "plt.xlabel('Time (s)')",
        "plt.ylabel('Power [W]')",
        'plt.legend()',
      ].join('\n'),
    )
    expect(chart).toMatchObject({
      type: 'line',
      title: 'Growth',
      x_label: 'Time (s)',
      y_label: 'Power [W]',
      x_unit: 's',
      y_unit: 'W',
      x_scale: 'linear',
      y_scale: 'linear',
    })
    expect(chart.elements).toEqual([
      {
        label: 'growth',
        points: [
          [1, 2],
          [2, 4],
          [3, 8],
        ],
      },
      {
        label: 'Line 1',
        points: [
          [1, 1],
          [2, 1],
          [3, 1],
        ],
      },
    ])
    expect(chart.x_ticks.every((tick: unknown) => typeof tick === 'number')).toBe(true)
    expect(chart.x_tick_labels).toHaveLength(chart.x_ticks.length)
    expect(chart.y_ticks).toContain(8)
  })

  it('reads a line chart over dates: a datetime scale and ISO dates', async () => {
    const chart = await chartOf(
      [
        'import datetime',
        'days = [datetime.date(2024, 1, day) for day in (1, 2, 3)]',
        "plt.plot(days, [3, 5, 4], label='visits')",
        "plt.title('Visits')",
      ].join('\n'),
    )
    expect(chart).toMatchObject({ type: 'line', title: 'Visits', x_scale: 'datetime' })
    expect(chart.x_label).toBeNull()
    expect(chart.x_unit).toBeNull()
    const [visits] = chart.elements
    expect(visits.label).toBe('visits')
    expect(visits.points.map(([x, y]: [string, number]) => [new Date(x).toISOString(), y])).toEqual(
      [
        ['2024-01-01T00:00:00.000Z', 3],
        ['2024-01-02T00:00:00.000Z', 5],
        ['2024-01-03T00:00:00.000Z', 4],
      ],
    )
    expect(chart.x_ticks.every((tick: unknown) => typeof tick === 'string')).toBe(true)
    expect(Number.isNaN(new Date(chart.x_ticks[0]).getTime())).toBe(false)
  })

  it('reads a scatter chart: each dataset and its points', async () => {
    const chart = await chartOf(
      [
        "plt.scatter([1, 2, 3], [3, 1, 2], label='Dataset A')",
        "plt.scatter([4, 5], [5, 6], label='Dataset B')",
        "plt.title('Samples')",
        "plt.xlabel('X')",
        "plt.ylabel('Y')",
      ].join('\n'),
    )
    expect(chart).toMatchObject({
      type: 'scatter',
      title: 'Samples',
      x_label: 'X',
      y_label: 'Y',
      x_unit: null,
      y_unit: null,
      x_scale: 'linear',
    })
    expect(chart.elements).toEqual([
      {
        label: 'Dataset A',
        points: [
          [1, 3],
          [2, 1],
          [3, 2],
        ],
      },
      {
        label: 'Dataset B',
        points: [
          [4, 5],
          [5, 6],
        ],
      },
    ])
  })

  it('reads a bar chart: each bar with its label, value and group', async () => {
    const chart = await chartOf(
      [
        'import numpy as np',
        'x = np.arange(2)',
        "plt.bar(x - 0.2, [1, 2], width=0.4, label='2023')",
        "plt.bar(x + 0.2, [3, 4], width=0.4, label='2024')",
        "plt.xticks(x, ['North', 'South'])",
        "plt.title('Sales')",
        "plt.xlabel('Region')",
        "plt.ylabel('Units (k)')",
      ].join('\n'),
    )
    expect(chart).toMatchObject({
      type: 'bar',
      title: 'Sales',
      x_label: 'Region',
      y_label: 'Units (k)',
      x_unit: null,
      y_unit: 'k',
    })
    expect(chart.elements).toEqual([
      { label: 'North', value: 1, group: '2023' },
      { label: 'South', value: 2, group: '2023' },
      { label: 'North', value: 3, group: '2024' },
      { label: 'South', value: 4, group: '2024' },
    ])
  })

  it('reads a pie chart: each wedge with its label, angle and radius', async () => {
    const chart = await chartOf(
      [
        'fig, ax = plt.subplots()',
        "ax.pie([90, 10], labels=['No', 'Yes'], startangle=90)",
        "ax.set_title('Will it rain?')",
      ].join('\n'),
    )
    expect(chart).toEqual({
      type: 'pie',
      title: 'Will it rain?',
      elements: [
        { label: 'No', angle: 324, radius: 1 },
        { label: 'Yes', angle: 36, radius: 1 },
      ],
    })
  })

  it('reads a box-and-whisker chart: quartiles, whiskers and outliers per box', async () => {
    const chart = await chartOf(
      [
        'fig, ax = plt.subplots()',
        'scores = [[85, 90, 78, 92, 88], [95, 89, 76, 91, 84, 87], [75, 82, 88, 79, 86]]',
        "ax.boxplot(scores, labels=['Class A', 'Class B', 'Class C'], patch_artist=True)",
        "ax.set_title('Exam Scores')",
        "ax.set_xlabel('Class')",
        "ax.set_ylabel('Score')",
      ].join('\n'),
    )
    expect(chart).toMatchObject({
      type: 'box_and_whisker',
      title: 'Exam Scores',
      x_label: 'Class',
      y_label: 'Score',
      x_unit: null,
      y_unit: null,
    })
    expect(chart.elements).toEqual([
      {
        label: 'Class A',
        min: 78,
        first_quartile: 85,
        median: 88,
        third_quartile: 90,
        max: 92,
        outliers: [],
      },
      {
        label: 'Class B',
        min: 84,
        first_quartile: 84.75,
        median: 88,
        third_quartile: 90.5,
        max: 95,
        outliers: [76],
      },
      {
        label: 'Class C',
        min: 75,
        first_quartile: 79,
        median: 82,
        third_quartile: 86,
        max: 88,
        outliers: [],
      },
    ])
  })

  it('reads a figure of several axes as a superchart of their charts', async () => {
    const chart = await chartOf(
      [
        'fig, axes = plt.subplots(1, 2)',
        "fig.suptitle('Two charts')",
        'axes[0].plot([0, 1, 2], [0, 1, 4])',
        "axes[0].set_title('Squares')",
        "axes[1].bar(['a', 'b'], [3, 4])",
        "axes[1].set_title('Counts')",
        "axes[1].set_ylabel('Count')",
      ].join('\n'),
    )
    expect(chart.type).toBe('superchart')
    expect(chart.title).toBe('Two charts')
    expect(chart.elements).toHaveLength(2)
    const [line, bar] = chart.elements
    expect(line).toMatchObject({ type: 'line', title: 'Squares', x_label: null })
    expect(line.elements).toEqual([
      {
        label: 'Line 0',
        points: [
          [0, 0],
          [1, 1],
          [2, 4],
        ],
      },
    ])
    expect(bar).toMatchObject({ type: 'bar', title: 'Counts', y_label: 'Count' })
    expect(bar.elements).toEqual([
      { label: 'a', value: 3, group: 'Group 0' },
      { label: 'b', value: 4, group: 'Group 0' },
    ])
  })
})
