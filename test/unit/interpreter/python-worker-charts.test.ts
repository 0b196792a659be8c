import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chartOf, PythonWorker } from './python-worker.js'

// Each test draws a real matplotlib figure in the worker, shows it, and reads the chart JSON
// of the display (wire contract §1.9).
describe('python worker charts', () => {
  let worker: PythonWorker

  beforeAll(async () => {
    worker = new PythonWorker()
    await worker.ready()
    await worker.run('import datetime\nimport numpy as np\nimport matplotlib.pyplot as plt')
  }, 60_000)
  afterAll(() => worker.stop())

  async function show(code: string) {
    return chartOf(await worker.run(`${code}\nplt.show()`))
  }

  it('reads a line chart: labels, units, datetime x axis, ticks, points', async () => {
    const chart = await show(`
dates = [datetime.datetime(2023, 9, 1) + datetime.timedelta(hours=i) for i in range(100)]
x = np.linspace(0, 2 * np.pi, 100)
plt.figure(figsize=(10, 6))
plt.plot(dates, np.sin(x), label="sin(x)")
plt.plot(dates, np.cos(x))
plt.xlabel("Time (s)")
plt.ylabel("Amplitude [Hz]")
plt.title("Plot of sin(x) and cos(x)")`)
    expect(chart).toMatchObject({
      type: 'line',
      title: 'Plot of sin(x) and cos(x)',
      x_label: 'Time (s)',
      y_label: 'Amplitude [Hz]',
      x_unit: 's',
      y_unit: 'Hz',
      x_scale: 'datetime',
      y_scale: 'linear',
    })
    const xTicks = chart.x_ticks as unknown[]
    expect(xTicks.length).toBeGreaterThan(1)
    expect(
      xTicks.every((tick) => typeof tick === 'string' && !Number.isNaN(Date.parse(tick))),
    ).toBe(true)
    expect((chart.y_ticks as unknown[]).every((tick) => typeof tick === 'number')).toBe(true)
    expect((chart.y_tick_labels as unknown[]).every((label) => typeof label === 'string')).toBe(
      true,
    )
    expect(chart.elements.map((element) => element.label)).toEqual(['sin(x)', 'Line 1'])
    const points = chart.elements[0]?.points as Array<[string, number]>
    expect(points).toHaveLength(100)
    expect(points[0]).toEqual(['2023-09-01T00:00:00', 0])
    expect(points[25]?.[0]).toBe('2023-09-02T01:00:00')
    expect(points[25]?.[1]).toBeCloseTo(Math.sin((25 * 2 * Math.PI) / 99), 10)
  })

  it('reads a pandas time series plot as a line chart on a datetime axis', async () => {
    const chart = await show(`
import pandas as pd
frame = pd.DataFrame({"visits": [3.0, 5.0, 4.0]}, index=pd.date_range("2024-01-01", periods=3, freq="37H"))
frame.plot(title="Visits")`)
    expect(chart).toMatchObject({ type: 'line', title: 'Visits', x_scale: 'datetime' })
    expect((chart.x_ticks as unknown[]).every((tick) => typeof tick === 'string')).toBe(true)
    expect(chart.elements).toEqual([
      {
        label: 'visits',
        points: [
          ['2024-01-01T00:00:00', 3],
          ['2024-01-02T13:00:00', 5],
          ['2024-01-04T02:00:00', 4],
        ],
      },
    ])
  })

  it('names log and categorical scales', async () => {
    const log = await show('plt.plot([1, 10, 100, 1000], [1, 2, 3, 4])\nplt.yscale("log")')
    expect(log).toMatchObject({ type: 'line', x_scale: 'linear', y_scale: 'log' })
    const categorical = await show('plt.plot([1, 2, 3, 4, 5], ["A", "B", "C", "D", "E"])')
    expect(categorical).toMatchObject({ type: 'line', x_scale: 'linear', y_scale: 'categorical' })
    expect(categorical.y_tick_labels).toEqual(['A', 'B', 'C', 'D', 'E'])
    expect(categorical.elements[0]?.points).toEqual([
      [1, 'A'],
      [2, 'B'],
      [3, 'C'],
      [4, 'D'],
      [5, 'E'],
    ])
  })

  it('reads a scatter chart: one element per point set', async () => {
    const chart = await show(`
plt.scatter([1, 2, 3], [4, 5, 6], label="Dataset 1")
plt.scatter([0.5, 1.5], [2.5, 3.5], label="Dataset 2")
plt.xlabel("Weight (kg)")
plt.ylabel("Height")
plt.title("People")`)
    expect(chart).toMatchObject({
      type: 'scatter',
      title: 'People',
      x_label: 'Weight (kg)',
      y_label: 'Height',
      x_unit: 'kg',
      y_unit: null,
      x_scale: 'linear',
      y_scale: 'linear',
    })
    expect(chart.elements).toEqual([
      {
        label: 'Dataset 1',
        points: [
          [1, 4],
          [2, 5],
          [3, 6],
        ],
      },
      {
        label: 'Dataset 2',
        points: [
          [0.5, 2.5],
          [1.5, 3.5],
        ],
      },
    ])
  })

  // Grouped bars beside their category's tick take its label.
  it('reads a bar chart: label, value and group of every bar', async () => {
    const chart = await show(`
authors = ["Author A", "Author B", "Author C"]
plt.bar(np.arange(3) - 0.2, [100, 200, 300], width=0.4, label="Books Sold")
plt.bar(np.arange(3) + 0.2, [10, 20, 30], width=0.4)
plt.xticks(np.arange(3) - 0.2, authors)
plt.xlabel("Authors")
plt.ylabel("Sales [units]")
plt.title("Book Sales by Authors")`)
    expect(chart).toEqual({
      type: 'bar',
      title: 'Book Sales by Authors',
      x_label: 'Authors',
      y_label: 'Sales [units]',
      x_unit: null,
      y_unit: 'units',
      elements: [
        { label: 'Author A', value: 100, group: 'Books Sold' },
        { label: 'Author B', value: 200, group: 'Books Sold' },
        { label: 'Author C', value: 300, group: 'Books Sold' },
        { label: 'Author A', value: 10, group: 'Group 1' },
        { label: 'Author B', value: 20, group: 'Group 1' },
        { label: 'Author C', value: 30, group: 'Group 1' },
      ],
    })
  })

  it('reads categorical and horizontal bars by their category names', async () => {
    const chart = await show('plt.bar(["x", "y"], [1.5, 2.5])')
    expect(chart.elements).toEqual([
      { label: 'x', value: 1.5, group: 'Group 0' },
      { label: 'y', value: 2.5, group: 'Group 0' },
    ])
    const horizontal = await show(
      'plt.barh(["x", "y"], [3, 4], label="Count")\nplt.xlabel("Count (n)")\nplt.ylabel("Letter")',
    )
    // The chart's x axis is the category axis, so the labels swap.
    expect(horizontal).toMatchObject({ x_label: 'Letter', y_label: 'Count (n)', y_unit: 'n' })
    expect(horizontal.elements).toEqual([
      { label: 'x', value: 3, group: 'Count' },
      { label: 'y', value: 4, group: 'Count' },
    ])
  })

  it('reads a pie chart: label, angle in degrees and radius of every wedge', async () => {
    const chart = await show(`
fig, ax = plt.subplots(figsize=(8, 8))
ax.pie([90, 10], labels=["No", "No, in blue"], autopct="%1.1f%%", startangle=90)
ax.axis("equal")
plt.title("Will I wake up early tomorrow?")`)
    expect(chart).toEqual({
      type: 'pie',
      title: 'Will I wake up early tomorrow?',
      elements: [
        { label: 'No', angle: 324, radius: 1 },
        { label: 'No, in blue', angle: 36, radius: 1 },
      ],
    })
  })

  it('reads a box-and-whisker chart: quartiles, whiskers and outliers of every box', async () => {
    const chart = await show(`
data = {
    "Class A": [85, 90, 78, 92, 88],
    "Class B": [95, 89, 76, 91, 84, 87],
    "Class C": [75, 82, 88, 79, 86],
}
fig, ax = plt.subplots(figsize=(10, 6))
ax.set_title("Exam Scores Distribution")
ax.set_xlabel("Class")
ax.set_ylabel("Score (points)")
ax.boxplot(data.values(), labels=data.keys(), patch_artist=True)`)
    expect(chart).toMatchObject({
      type: 'box_and_whisker',
      title: 'Exam Scores Distribution',
      x_label: 'Class',
      y_label: 'Score (points)',
      x_unit: null,
      y_unit: 'points',
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
    const chart = await show(`
fig, axs = plt.subplots(1, 2, figsize=(10, 8))
fig.suptitle("Multiple Charts Example")
x = np.linspace(0, 10, 100)
axs[0].plot(x, np.sin(x), "r")
axs[0].set_title("Sine Wave")
axs[0].grid(True)
axs[1].scatter([0.1, 0.2, 0.3, 0.4, 0.5], [1, 2, 3, 4, 5], label="Dataset 1")
axs[1].set_xlabel("X")
axs[1].set_ylabel("Y")
axs[1].set_title("Scatter Plot")`)
    expect(chart.type).toBe('superchart')
    expect(chart.title).toBe('Multiple Charts Example')
    const [line, scatter] = chart.elements as Array<{
      elements: Array<{ points: unknown[] }>
      [key: string]: unknown
    }>
    expect(line).toMatchObject({ type: 'line', title: 'Sine Wave', x_label: null, y_label: null })
    expect(line?.elements).toHaveLength(1)
    expect(line?.elements[0]?.points).toHaveLength(100)
    expect(scatter).toMatchObject({ type: 'scatter', title: 'Scatter Plot', x_label: 'X' })
    expect(scatter?.elements[0]?.points).toHaveLength(5)
  })

  it('gives a figure of other artists an unknown chart with its title', async () => {
    const chart = await show(`
fig, ax = plt.subplots()
ax.add_artist(plt.Circle((0, 0), 1, fill=False))
ax.add_artist(plt.Circle((0, 0), 2, fill=False))
ax.grid(True)
plt.title("Two Concentric Circles")`)
    expect(chart).toEqual({ type: 'unknown', title: 'Two Concentric Circles', elements: [] })
  })
})
