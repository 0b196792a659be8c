import { describe, expect, it } from 'vitest'
import { runtimeArgs, withoutUnifiedCgroup } from '../../../../src/agent/runtime/runtime-args.js'

describe('runtimeArgs', () => {
  const root = '/var/lib/sandbar/crun'

  it('puts --root and the global flags before every command', () => {
    expect(runtimeArgs(root, ['--network=host'], { op: 'state', id: 'c1' })).toEqual([
      '--root',
      root,
      '--network=host',
      'state',
      'c1',
    ])
  })

  it('runs detached from a bundle, writing the init PID to a file', () => {
    const run = { op: 'run', id: 'c1', bundleDir: '/b/c1', pidFile: '/b/c1/init.pid' } as const
    expect(runtimeArgs(root, [], run)).toEqual([
      '--root',
      root,
      'run',
      '--detach',
      '--pid-file',
      '/b/c1/init.pid',
      '--bundle',
      '/b/c1',
      'c1',
    ])
  })

  it('builds list, pause, resume and delete', () => {
    const tail = (args: string[]) => args.slice(2)
    expect(tail(runtimeArgs(root, [], { op: 'list' }))).toEqual(['list', '--format', 'json'])
    expect(tail(runtimeArgs(root, [], { op: 'pause', id: 'c1' }))).toEqual(['pause', 'c1'])
    expect(tail(runtimeArgs(root, [], { op: 'resume', id: 'c1' }))).toEqual(['resume', 'c1'])
    expect(tail(runtimeArgs(root, [], { op: 'delete', id: 'c1' }))).toEqual([
      'delete',
      '--force',
      'c1',
    ])
  })

  it('keeps hostile IDs as single argv elements', () => {
    const id = 'x; rm -rf / $(id)'
    expect(runtimeArgs(root, [], { op: 'state', id }).at(-1)).toBe(id)
  })
})

describe('withoutUnifiedCgroup', () => {
  it('runs the command through the helper, each argument an argv element of its own', () => {
    const command = withoutUnifiedCgroup(
      '/opt/sandbar/without-unified-cgroup',
      '/sys/fs/cgroup/unified',
      '/usr/bin/crun',
      ['run', 'c1; rm -rf /'],
    )
    expect(command).toEqual({
      file: '/opt/sandbar/without-unified-cgroup',
      args: ['/sys/fs/cgroup/unified', '/usr/bin/crun', 'run', 'c1; rm -rf /'],
    })
  })
})
