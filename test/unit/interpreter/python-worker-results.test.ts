import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PythonWorker, resultsOf } from './python-worker.js'

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

function isPng(base64: unknown) {
  return (
    typeof base64 === 'string' && Buffer.from(base64, 'base64').subarray(0, 8).equals(pngSignature)
  )
}

describe('python worker results', () => {
  let worker: PythonWorker

  beforeAll(async () => {
    worker = new PythonWorker()
    await worker.ready()
  }, 60_000)
  afterAll(() => worker.stop())

  it('gives a DataFrame as e2b/data with ISO timestamps, html and text', async () => {
    const events = await worker.run(
      [
        'import pandas as pd',
        'pd.DataFrame({',
        '    "name": ["a", "b"],',
        '    "score": [1.5, float("nan")],',
        '    "when": pd.to_datetime(["2024-01-01", "2024-01-02 03:04:05"]),',
        '})',
      ].join('\n'),
    )
    const [result] = resultsOf(events)
    expect(result?.is_main_result).toBe(true)
    expect(result?.bundle['e2b/data']).toEqual({
      name: ['a', 'b'],
      score: [1.5, null],
      when: ['2024-01-01T00:00:00', '2024-01-02T03:04:05'],
    })
    expect(result?.bundle['text/html']).toContain('<table')
    expect(result?.bundle['text/plain']).toContain('score')
  })

  it('gives plain lists and dicts application/json, numpy values included', async () => {
    const events = await worker.run(
      'import numpy as np\n{"a": [1, 2.5], "b": np.int64(3), "c": np.array([1.0, 2.0]), "d": None}',
    )
    expect(resultsOf(events)[0]?.bundle['application/json']).toEqual({
      a: [1, 2.5],
      b: 3,
      c: [1, 2],
      d: null,
    })
    const list = await worker.run('[1, "two", {"three": 3}]')
    expect(resultsOf(list)[0]?.bundle).toEqual({
      'text/plain': "[1, 'two', {'three': 3}]",
      'application/json': [1, 'two', { three: 3 }],
    })
    const string = await worker.run('"not json"')
    expect(resultsOf(string)[0]?.bundle).toEqual({ 'text/plain': "'not json'" })
  })

  it('displays a figure on plt.show() with png, text and chart, then the main result', async () => {
    const events = await worker.run(
      [
        'import matplotlib.pyplot as plt',
        'plt.figure(figsize=(10, 6))',
        'plt.plot([1, 2, 3], [4, 5, 6])',
        'plt.show()',
        '"after"',
      ].join('\n'),
    )
    const results = resultsOf(events)
    expect(results.map((result) => result.is_main_result)).toEqual([false, true])
    const bundle = results[0]?.bundle ?? {}
    expect(Object.keys(bundle).sort()).toEqual(['e2b/chart', 'image/png', 'text/plain'])
    expect(bundle['text/plain']).toBe('<Figure size 1000x600 with 1 Axes>')
    expect(isPng(bundle['image/png'])).toBe(true)
    expect(bundle['e2b/chart']).toMatchObject({ type: 'line' })
  })

  it('displays a figure left open at the end of a cell once, after the cell', async () => {
    const events = await worker.run('plt.bar(["a", "b"], [1, 2]);')
    const results = resultsOf(events)
    expect(results).toHaveLength(1)
    expect(results[0]?.is_main_result).toBe(false)
    expect(results[0]?.bundle['e2b/chart']).toMatchObject({ type: 'bar' })
    const next = await worker.run('len(plt.get_fignums())')
    expect(resultsOf(next).map((result) => result.bundle['text/plain'])).toEqual(['0'])
  })

  it('gives a figure as the last expression once, as the main result', async () => {
    const events = await worker.run('fig, ax = plt.subplots()\nax.plot([1, 2], [3, 4])\nfig')
    const results = resultsOf(events)
    expect(results).toHaveLength(1)
    expect(results[0]?.is_main_result).toBe(true)
    expect(isPng(results[0]?.bundle['image/png'])).toBe(true)
    expect(results[0]?.bundle['e2b/chart']).toMatchObject({ type: 'line' })
  })

  it('gives a blank figure an empty chart', async () => {
    const events = await worker.run('plt.figure()\nplt.show()')
    expect(resultsOf(events)[0]?.bundle['e2b/chart']).toEqual({})
  })

  it('displays PIL images on show() and on save(path) as png', async () => {
    const events = await worker.run(
      [
        'from PIL import Image',
        'import tempfile, os',
        'image = Image.new("RGB", (8, 8), "red")',
        'image.show()',
        'path = os.path.join(tempfile.mkdtemp(), "red.png")',
        'image.save(path)',
        'os.path.getsize(path) > 0',
      ].join('\n'),
    )
    const results = resultsOf(events)
    expect(results.map((result) => result.is_main_result)).toEqual([false, false, true])
    expect(isPng(results[0]?.bundle['image/png'])).toBe(true)
    expect(isPng(results[1]?.bundle['image/png'])).toBe(true)
    expect(results[2]?.bundle['text/plain']).toBe('True')
  })
})
