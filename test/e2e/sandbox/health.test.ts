import { expect } from 'vitest'
import { sandboxTest } from '../setup.js'

sandboxTest('a debug-mode sandbox is running', async ({ sandbox }) => {
  expect(await sandbox.isRunning()).toBe(true)
})
