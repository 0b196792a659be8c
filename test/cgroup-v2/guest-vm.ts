import { type ChildProcess, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { GuestKernel } from './guest-kernel.js'

export interface GuestSpec {
  kernel: GuestKernel
  initramfs: string
  /** The repository the guest runs the tests of, a host path. */
  repo: string
  /** Agent test files, relative to the repository. */
  tests: readonly string[]
  /** Vitest's `-t` pattern: which of their tests run. */
  testNames: string
  /** Where the console and report files go. */
  workDir: string
  /** scripts/build.mjs's output, built on the host: emulated, the guest takes minutes to build. */
  buildDir: string
  /**
   * The base template's layer, a host path, and an ext4 image of its contents that the guest
   * mounts there (guest-layer-image.ts).
   */
  layer: { path: string; image: string }
}

export interface GuestRun {
  /** qemu's exit code; null when it was killed. */
  exitCode: number | null
  timedOut: boolean
  /** The guest's console: kernel messages and the inner test run's output. */
  console: string
  /** What the guest wrote on its second serial port (guest-report.ts parses it). */
  report: string
}

/** The qemu command line for the guest, one comment per choice. */
export function qemuArgs(spec: GuestSpec): string[] {
  const words = [
    spec.repo,
    spec.kernel.modulesDir,
    spec.layer.path,
    spec.buildDir,
    spec.testNames,
    ...spec.tests,
  ]
  if (words.some((word) => /[\s,]/.test(word))) {
    throw new Error('repository, module and test paths and names must not hold spaces or commas')
  }
  const cmdline = [
    'console=ttyS0',
    // Kernel messages only from warnings up: the console carries the test run.
    'loglevel=4',
    // A panic (PID 1 failed) reboots at once, and -no-reboot turns that into qemu's exit.
    'panic=-1',
    'rdinit=/init',
    // No v1 hierarchy can exist: the guest is a pure cgroup v2 host.
    'cgroup_no_v1=all',
    // Words the kernel does not know become init's environment, which both stages inherit.
    `sandbar_repo=${spec.repo}`,
    `sandbar_modules=${spec.kernel.modulesDir}`,
    `sandbar_tests=${spec.tests.join(',')}`,
    `sandbar_test_names=${spec.testNames}`,
    `sandbar_layer=${spec.layer.path}`,
    `sandbar_build=${spec.buildDir}`,
  ]
  return [
    // Software emulation. This machine's /dev/kvm is a PVM hypervisor (host-facts), which runs
    // only PVM-enabled guest kernels: Debian's was still decompressing after 120 s, and booted
    // uncompressed it took 8 s to reach its clock set-up, then qemu stopped on "KVM internal
    // error. Suberror: 1" (emulation failure). Multi-threaded TCG reaches init in ~3 s.
    // Nehalem (x86-64-v2, no AVX) rather than `max`: qemu 7.2's emulated AVX is new, and two
    // early runs with `max` stopped without a cause found.
    ...['-accel', 'tcg,thread=multi', '-cpu', 'Nehalem'],
    ...['-smp', '2', '-m', '4096'],
    // No default devices, and above all no network device: the guest reaches nothing.
    ...['-nodefaults', '-nic', 'none', '-display', 'none', '-no-reboot'],
    // ttyS0: console; ttyS1: the report.
    ...['-serial', `file:${path.join(spec.workDir, 'console.log')}`],
    ...['-serial', `file:${path.join(spec.workDir, 'report.log')}`],
    // The host's / as the guest's root, read-only. It spans several file systems (/proc,
    // /sys, …), so inode numbers are remapped to stay unique.
    '-virtfs',
    'local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap',
    // The template layer on a file system that takes idmapped mounts, as every sandbox's
    // overlay needs (9p and overlayfs refuse them): the guest's first disk, /dev/vda.
    ...['-drive', `file=${spec.layer.image},if=virtio,format=raw,readonly=on`],
    ...['-kernel', spec.kernel.vmlinuz, '-initrd', spec.initramfs],
    ...['-append', cmdline.join(' ')],
  ]
}

/** The running guest, if any: killed by PID on timeout or by killGuest. */
let running: ChildProcess | undefined

/** Boots the guest and waits for it to power off, or kills it after timeoutMs. */
export async function runGuest(spec: GuestSpec, timeoutMs: number): Promise<GuestRun> {
  // At the lowest CPU priority: the guest runs beside the rest of the suite and takes only
  // the CPU its tests leave idle, so their timings stay what they are without it.
  const child = spawn('nice', ['-n', '19', 'qemu-system-x86_64', ...qemuArgs(spec)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  running = child
  const stderr: Buffer[] = []
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    killGuest()
  }, timeoutMs)
  try {
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject)
      child.once('close', resolve)
    })
    const qemuErrors = Buffer.concat(stderr).toString()
    return {
      exitCode,
      timedOut,
      console: (await readOptional(path.join(spec.workDir, 'console.log'))) + qemuErrors,
      report: await readOptional(path.join(spec.workDir, 'report.log')),
    }
  } finally {
    clearTimeout(timer)
    running = undefined
  }
}

/** Kills the guest's qemu, by its PID, if it still runs. */
export function killGuest(): void {
  if (running?.exitCode === null && running.signalCode === null) running.kill('SIGKILL')
}

async function readOptional(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => '')
}
