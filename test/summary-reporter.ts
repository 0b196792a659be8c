import type { Reporter, SerializedError, TestModule } from 'vitest/node'

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, which any CI log
 * reader understands without knowing Vitest's own summary format. Failures outside any test
 * (a `beforeAll` that threw, an unhandled error) are named after it, since they fail the run
 * while every test in the count may have passed or been skipped.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    const counts = { passed: 0, failed: 0, skipped: 0 }
    let filesFailedOutsideTests = 0
    for (const module of testModules) {
      let testFailed = false
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') counts.passed++
        else if (state === 'failed') {
          counts.failed++
          testFailed = true
        } else counts.skipped++
      }
      if (module.state() === 'failed' && !testFailed) filesFailedOutsideTests++
    }
    const outside = [
      filesFailedOutsideTests > 0 ? `${filesFailedOutsideTests} files failed outside tests` : '',
      unhandledErrors.length > 0 ? `${unhandledErrors.length} unhandled errors` : '',
    ].filter((part) => part !== '')
    console.log(
      `tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped` +
        (outside.length > 0 ? `; ${outside.join(', ')}` : ''),
    )
  }
}
