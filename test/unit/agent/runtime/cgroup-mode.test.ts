import { describe, expect, it } from 'vitest'
import { parseCgroupMode } from '../../../../src/agent/runtime/cgroup-mode.js'

const common = [
  '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
  '23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw',
]

/** This host (host-facts § the machine): v1 controllers plus cgroup2 at …/unified. */
const hybrid = [
  ...common,
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n')

const v2 = [
  ...common,
  '30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate',
].join('\n')

const v1 = [
  ...common,
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory',
].join('\n')

describe('parseCgroupMode', () => {
  it('finds hybrid and the cgroup2 mount crun must not see', () => {
    expect(parseCgroupMode(hybrid)).toEqual({
      kind: 'hybrid',
      mountPoints: [
        '/sys/fs/cgroup/cpu',
        '/sys/fs/cgroup/memory',
        '/sys/fs/cgroup/pids',
        '/sys/fs/cgroup/unified',
      ],
      unifiedMountPoint: '/sys/fs/cgroup/unified',
    })
  })

  it('finds pure v2', () => {
    expect(parseCgroupMode(v2)).toEqual({ kind: 'v2', mountPoints: ['/sys/fs/cgroup'] })
  })

  it('finds pure v1, with optional fields and joined controllers', () => {
    expect(parseCgroupMode(v1)).toEqual({
      kind: 'v1',
      mountPoints: ['/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/memory'],
    })
  })

  it('unescapes octal in mount points', () => {
    const line = '50 23 0:40 / /mnt/with\\040space rw - cgroup2 cgroup2 rw'
    expect(parseCgroupMode([...common, line].join('\n')).mountPoints).toEqual(['/mnt/with space'])
  })

  it('refuses a host without cgroups', () => {
    expect(() => parseCgroupMode(common.join('\n'))).toThrow('no cgroup file system is mounted')
  })
})
