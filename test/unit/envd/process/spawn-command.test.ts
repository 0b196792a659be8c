import { describe, expect, it } from 'vitest'
import { HOST_SETPRIV } from '../../../../src/envd/process/setpriv-prefix.js'
import { PROCESS_PREAMBLE, spawnCommand } from '../../../../src/envd/process/spawn-command.js'

describe('spawnCommand', () => {
  it('drops to the uid, gid and supplementary groups through setpriv, then execs via sh', () => {
    const command = spawnCommand({
      setpriv: [HOST_SETPRIV],
      credentials: { uid: 1000, gid: 1000, groups: [1000, 1500] },
      cmd: '/bin/bash',
      args: ['-l', '-c', 'echo hi'],
    })
    expect(command).toEqual({
      file: '/usr/bin/setpriv',
      args: [
        '--reuid=1000',
        '--regid=1000',
        '--groups=1000,1500',
        '--',
        '/bin/sh',
        '-c',
        PROCESS_PREAMBLE,
        'sh',
        '/bin/bash',
        '-l',
        '-c',
        'echo hi',
      ],
    })
  })

  it('starts setpriv through a loader prefix, whose arguments come before setpriv’s own', () => {
    const command = spawnCommand({
      setpriv: ['/tb/lib/ld-linux-x86-64.so.2', '--library-path', '/tb/lib', '/tb/bin/setpriv'],
      credentials: { uid: 1000, gid: 1000, groups: [] },
      cmd: 'id',
      args: ['-G'],
    })
    expect(command.file).toBe('/tb/lib/ld-linux-x86-64.so.2')
    expect(command.args).toEqual([
      '--library-path',
      '/tb/lib',
      '/tb/bin/setpriv',
      '--reuid=1000',
      '--regid=1000',
      '--clear-groups',
      '--',
      '/bin/sh',
      '-c',
      PROCESS_PREAMBLE,
      'sh',
      'id',
      '-G',
    ])
  })

  it('clears every supplementary group when the user has none', () => {
    const { args } = spawnCommand({
      setpriv: ['/opt/toolbox/setpriv'],
      credentials: { uid: 0, gid: 0, groups: [] },
      cmd: 'true',
      args: [],
    })
    expect(args.slice(0, 4)).toEqual(['--reuid=0', '--regid=0', '--clear-groups', '--'])
  })

  it('passes the command and its arguments as positional parameters, never into the script', () => {
    const hostile = '"; rm -rf / #'
    const { file, args } = spawnCommand({
      setpriv: ['/opt/toolbox/setpriv'],
      credentials: { uid: 1, gid: 1, groups: [1] },
      cmd: hostile,
      args: ['$(id)', '`id`'],
    })
    expect(file).toBe('/opt/toolbox/setpriv')
    expect(args.indexOf(PROCESS_PREAMBLE)).toBe(args.indexOf('-c') + 1)
    expect(args.slice(-3)).toEqual([hostile, '$(id)', '`id`'])
    expect(PROCESS_PREAMBLE).toContain('exec "$@"')
    expect(PROCESS_PREAMBLE).toContain('oom_score_adj')
  })
})
