import { describe, expect, it } from 'vitest'
import {
  buildOciSpec,
  DEFAULT_CAPABILITIES,
  MASKED_PATHS,
  SANDBOX_NOFILE,
} from '../../../../src/agent/runtime/oci-spec.js'
import type { ContainerSpec } from '../../../../src/agent/runtime/runtime.js'
import { volumeMountPathProblem } from '../../../../src/agent/volumes/volume-mount-path.js'

const spec: ContainerSpec = {
  id: 'sbx-a1',
  bundleDir: '/var/lib/sandbar/bundles/a1',
  outputFile: '/var/lib/sandbar/bundles/a1.log',
  rootfs: '/var/lib/sandbar/rootfs/a1',
  readonlyBinds: [{ source: '/var/lib/sandbar/toolbox', destination: '/.sandbar' }],
  netnsPath: '/run/netns/sbx-a1',
  cgroupsPath: '/sandbar-sbx/a1',
  idMap: { hostID: 100_000, size: 65_536 },
  hostname: 'a1',
  resources: { cpuCount: 2, memoryMB: 512, pids: 256 },
  process: { args: ['/.sandbar/tini', '--', 'envd'], env: { A: '1', B: 'x=y' }, cwd: '/home/user' },
}

describe('buildOciSpec', () => {
  const config = buildOciSpec(spec)

  it('runs the spec process as root inside, without a terminal, sudo allowed', () => {
    expect(config.ociVersion).toBe('1.0.2')
    expect(config.root).toEqual({ path: spec.rootfs, readonly: false })
    expect(config.process).toMatchObject({
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: spec.process.args,
      env: ['A=1', 'B=x=y'],
      cwd: '/home/user',
      noNewPrivileges: false,
    })
    expect(config.hostname).toBe('a1')
  })

  it('grants the default capability set and nothing more', () => {
    expect(config.process.capabilities.bounding).toEqual(DEFAULT_CAPABILITIES)
    expect(config.process.capabilities.effective).toEqual(DEFAULT_CAPABILITIES)
    expect(config.process.capabilities.inheritable).toEqual([])
    expect(config.process.capabilities.bounding).not.toContain('CAP_SYS_ADMIN')
  })

  it('creates every namespace but the network, which it joins', () => {
    expect(config.linux.namespaces).toEqual([
      { type: 'user' },
      { type: 'pid' },
      { type: 'mount' },
      { type: 'ipc' },
      { type: 'uts' },
      { type: 'cgroup' },
      { type: 'network', path: '/run/netns/sbx-a1' },
    ])
    const mapping = [{ containerID: 0, hostID: 100_000, size: 65_536 }]
    expect(config.linux.uidMappings).toEqual(mapping)
    expect(config.linux.gidMappings).toEqual(mapping)
  })

  it('joins a user namespace the agent made, keeping the same maps', () => {
    const joined = buildOciSpec({ ...spec, userNamespacePath: '/var/lib/sandbar/a1/userns' })
    expect(joined.linux.namespaces[0]).toEqual({ type: 'user', path: '/var/lib/sandbar/a1/userns' })
    expect(joined.linux.uidMappings).toEqual(config.linux.uidMappings)
    const gvisor = buildOciSpec(
      { ...spec, userNamespacePath: '/var/lib/sandbar/a1/userns' },
      { userNamespace: true, pidsLimit: false, ownKernel: true },
    )
    expect(gvisor.linux.namespaces[0]).toEqual({ type: 'user' })
  })

  it('turns cpuCount, memoryMB and pids into cgroup limits', () => {
    expect(config.linux.resources).toEqual({
      cpu: { shares: 2048, quota: 200_000, period: 100_000 },
      memory: { limit: 512 * 1024 * 1024, swap: 512 * 1024 * 1024 },
      pids: { limit: 256 },
    })
    expect(config.linux.cgroupsPath).toBe('/sandbar-sbx/a1')
  })

  it('bounds open files per process and turns core dumps off for good', () => {
    expect(config.process.rlimits).toEqual([
      { type: 'RLIMIT_NOFILE', hard: SANDBOX_NOFILE, soft: SANDBOX_NOFILE },
      { type: 'RLIMIT_CORE', hard: 0, soft: 0 },
    ])
  })

  it("binds a sysfs of the sandbox's netns, not the host's /sys, and the toolbox read-only", () => {
    expect(config.mounts.map((mount) => mount.destination)).toEqual([
      '/proc',
      '/dev',
      '/dev/pts',
      '/dev/shm',
      '/dev/mqueue',
      '/sys',
      '/run',
      '/.sandbar',
    ])
    const sys = config.mounts.find((mount) => mount.destination === '/sys')
    // Mounted by the runtime in the bundle for the joined netns (netns-sysfs.ts); no rbind, so
    // none of the host's submounts of /sys come along.
    expect(sys).toEqual({
      destination: '/sys',
      type: 'bind',
      source: '/var/lib/sandbar/bundles/a1/sys',
      options: ['bind', 'nosuid', 'noexec', 'nodev', 'ro'],
    })
    expect(config.mounts.at(-1)).toEqual({
      destination: '/.sandbar',
      type: 'bind',
      source: '/var/lib/sandbar/toolbox',
      options: ['rbind', 'ro', 'nosuid', 'nodev'],
    })
  })

  it('binds volumes read-write after every other mount, never setuid or device', () => {
    const volumes = buildOciSpec({
      ...spec,
      volumeBinds: [
        { source: '/var/lib/sandbar/a1/volumes/1', destination: '/data' },
        { source: '/var/lib/sandbar/a1/volumes/0', destination: '/data/cache' },
      ],
    })
    // No volume may take the place of another mount (volume-mount-path.ts).
    for (const mount of config.mounts) {
      expect(volumeMountPathProblem(mount.destination)).toMatch(/would hide|is inside/)
    }
    expect(volumes.mounts.slice(-3)).toEqual([
      expect.objectContaining({ destination: '/.sandbar' }),
      {
        destination: '/data',
        type: 'bind',
        source: '/var/lib/sandbar/a1/volumes/1',
        options: ['bind', 'rw', 'nosuid', 'nodev'],
      },
      {
        destination: '/data/cache',
        type: 'bind',
        source: '/var/lib/sandbar/a1/volumes/0',
        options: ['bind', 'rw', 'nosuid', 'nodev'],
      },
    ])
  })

  it("masks Docker's default paths", () => {
    expect(config.linux.maskedPaths).toEqual(expect.arrayContaining(MASKED_PATHS))
    expect(config.linux.readonlyPaths).toContain('/proc/sys')
  })

  it('allows a list of syscalls: the rest answer ENOSYS, namespaces and io_uring EPERM', () => {
    const { seccomp } = config.linux
    expect(seccomp).toMatchObject({ defaultAction: 'SCMP_ACT_ERRNO', defaultErrnoRet: 38 })
    expect(seccomp.architectures).toEqual(['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'])
    const named = (action: string, errnoRet?: number) =>
      seccomp.syscalls
        .filter((rule) => rule.action === action && rule.errnoRet === errnoRet && !rule.args)
        .flatMap((rule) => rule.names)
    const allowed = named('SCMP_ACT_ALLOW')
    expect(allowed).toEqual(
      expect.arrayContaining(['execve', 'setresuid', 'ptrace', 'inotify_init1']),
    )
    const refused = named('SCMP_ACT_ERRNO', 1)
    expect(refused).toEqual(
      expect.arrayContaining(['unshare', 'setns', 'mount', 'fsopen', 'io_uring_setup', 'bpf']),
    )
    expect(allowed.filter((name) => refused.includes(name))).toEqual([])
    // clone only without namespace flags; clone3, whose flags seccomp cannot see, not at all.
    const clone = seccomp.syscalls.filter((rule) => rule.names.includes('clone'))
    expect(clone[0]).toEqual({
      names: ['clone'],
      action: 'SCMP_ACT_ALLOW',
      args: [{ index: 0, value: 0x7e020000, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
    })
    expect(clone.slice(1).every((rule) => rule.errnoRet === 1)).toBe(true)
    expect(named('SCMP_ACT_ERRNO', 38)).toEqual(['clone3'])
  })

  it("binds the sandbox's boot ID over the kernel's, read-only, when it is given one", () => {
    const withBootId = { ...spec, bootIdFile: '/var/lib/sandbar/a1/boot_id' }
    expect(buildOciSpec(withBootId).mounts).toContainEqual({
      destination: '/proc/sys/kernel/random/boot_id',
      type: 'bind',
      source: '/var/lib/sandbar/a1/boot_id',
      options: ['bind', 'ro', 'nosuid', 'nodev', 'noexec'],
    })
    const destinations = (given: ContainerSpec) =>
      buildOciSpec(given).mounts.map((mount) => mount.destination)
    expect(destinations(spec)).not.toContain('/proc/sys/kernel/random/boot_id')
    // After /proc, which it lies on.
    expect(destinations(withBootId).indexOf('/proc/sys/kernel/random/boot_id')).toBeGreaterThan(
      destinations(withBootId).indexOf('/proc'),
    )
  })

  it('leaves out the user namespace when the runtime cannot take it', () => {
    const plain = buildOciSpec(spec, { userNamespace: false, pidsLimit: true, ownKernel: false })
    expect(plain.linux.namespaces.map((namespace) => namespace.type)).not.toContain('user')
    expect(plain.linux.uidMappings).toBeUndefined()
    expect(plain.mounts.find((mount) => mount.destination === '/sys')?.type).toBe('sysfs')
  })

  it("gives gVisor the user namespace, no pids limit and a sysfs of the sentry's own", () => {
    const gvisor = buildOciSpec(spec, { userNamespace: true, pidsLimit: false, ownKernel: true })
    expect(gvisor.linux.namespaces.map((namespace) => namespace.type)).toContain('user')
    expect(gvisor.linux.uidMappings).toEqual([{ containerID: 0, hostID: 100000, size: 65536 }])
    expect(gvisor.linux.resources.pids).toBeUndefined()
    expect(gvisor.mounts.find((mount) => mount.destination === '/sys')?.type).toBe('sysfs')
    // gVisor answers every refusal with EPERM: clone3 must go through for threads to start.
    const clone3 = gvisor.linux.seccomp.syscalls.find((rule) => rule.names.includes('clone3'))
    expect(clone3).toEqual({ names: ['clone3'], action: 'SCMP_ACT_ALLOW' })
  })
})
