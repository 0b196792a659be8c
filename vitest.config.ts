import { defineConfig } from 'vitest/config'

// Unit tests run in parallel; agent tests (real containers, netns, nftables) and end-to-end
// tests (real processes through the official e2b SDK) run one file at a time, which suits the
// 2-core CI machine, as do proxy tests (real servers on loopback addresses). The cgroup-v2
// project runs agent tests again inside an emulated pure cgroup v2 guest. Agent tests may
// import src/agent; end-to-end tests never import src.
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
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          name: 'cgroup-v2',
          include: ['test/cgroup-v2/**/*.test.ts'],
          fileParallelism: false,
          // After every other project: the guest keeps both cores busy for minutes, which
          // would skew the timings and timeouts of tests running beside it.
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          // Fetching the guest kernel, the base template and the guest's whole test run.
          hookTimeout: 20 * 60_000,
        },
      },
      {
        test: {
          name: 'proxy',
          include: ['test/proxy/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'store',
          include: ['test/store/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'serve',
          include: ['test/serve/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
})
