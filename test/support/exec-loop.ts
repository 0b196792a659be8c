import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'

/**
 * A program that starts four threads and execs itself, for ever: each exec waits in the
 * kernel for its threads to exit, with no interpreter's start between one exec and the next.
 * On a cgroup v1 freezer, a thread frozen before it exits holds the exec, and the freeze with
 * it, until the freezer thaws (cgroup-freezer.ts).
 */
const EXEC_LOOP_C = `
#include <pthread.h>
#include <unistd.h>
static void *sleeper(void *arg) { for (;;) pause(); return arg; }
int main(int argc, char **argv) {
  for (int i = 0; i < 4; i++) { pthread_t thread; pthread_create(&thread, 0, sleeper, 0); }
  execv("/proc/self/exe", argv);
  return argc;
}
`

/** Compiles the exec loop in `dir`, statically so that it runs in any sandbox; its path. */
export async function compileExecLoop(dir: string): Promise<string> {
  const source = path.join(dir, 'exec-loop.c')
  const program = path.join(dir, 'exec-loop')
  await writeFile(source, EXEC_LOOP_C)
  await promisify(execFile)('cc', ['-O2', '-static', '-pthread', '-o', program, source])
  return program
}
