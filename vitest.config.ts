import { defineConfig } from 'vitest/config'

// Unit tests run first, in parallel. Then the projects that start real things (containers,
// netns, nftables, servers, the official e2b SDK against processes) share one group of one
// worker: one file at a time, which suits the 2-core CI machine and keeps their sandboxes,
// address pools and timings apart. The cgroup-v2 project's guest boots in its global setup
// as the run starts and works beside all of that at the lowest CPU priority; its test file
// comes last and reads the guest's report. Agent tests may import src/agent; end-to-end tests
// never import src.
const ONE_AT_A_TIME = { fileParallelism: false, sequence: { groupOrder: 1 } }

export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'agent',
          include: ['test/agent/**/*.test.ts'],
          globalSetup: ['test/agent/global-setup.ts'],
          ...ONE_AT_A_TIME,
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          name: 'cgroup-v2',
          include: ['test/cgroup-v2/**/*.test.ts'],
          globalSetup: ['test/cgroup-v2/global-setup.ts'],
          fileParallelism: false,
          // After every other project: the file only waits for the guest.
          sequence: { groupOrder: 2 },
          testTimeout: 60_000,
          // The guest's whole run, beside the other projects (global-setup.ts).
          hookTimeout: 30 * 60_000,
        },
      },
      {
        test: {
          name: 'proxy',
          include: ['test/proxy/**/*.test.ts'],
          ...ONE_AT_A_TIME,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'store',
          include: ['test/store/**/*.test.ts'],
          ...ONE_AT_A_TIME,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'serve',
          include: ['test/serve/**/*.test.ts'],
          ...ONE_AT_A_TIME,
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          ...ONE_AT_A_TIME,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
})
