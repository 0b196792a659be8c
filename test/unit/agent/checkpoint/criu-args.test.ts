import { describe, expect, it } from 'vitest'
import {
  dumpArgs,
  externalFileKey,
  restoreArgs,
} from '../../../../src/agent/checkpoint/criu-args.js'

const MINIMAL_DUMP = {
  pid: 1,
  imagesDir: '/i',
  rootfs: '/r',
  freezerCgroup: '/f',
  toolboxMountPoint: '/.sandbar',
  externalFiles: [],
}

describe('CRIU arguments', () => {
  it('names a file outside the mounts by its mount ID and inode, in hex as CRIU prints them', () => {
    expect(externalFileKey(27, 2228263)).toBe('file[1b:220027]')
  })

  it('dumps the tree with an empty netns, the toolbox and outside files as external', () => {
    const args = dumpArgs({
      pid: 4242,
      imagesDir: '/data/sandboxes/s1/checkpoint',
      rootfs: '/data/sandboxes/s1/rootfs',
      freezerCgroup: '/sys/fs/cgroup/freezer/sandbar-sb/s1',
      toolboxMountPoint: '/.sandbar',
      externalFiles: ['file[1b:220027]'],
    })
    expect(args.slice(0, 3)).toEqual(['dump', '--tree', '4242'])
    expect(args.join(' ')).toContain('--freeze-cgroup /sys/fs/cgroup/freezer/sandbar-sb/s1')
    expect(args.join(' ')).toContain('--empty-ns net')
    expect(args.join(' ')).toContain('--external mnt[/.sandbar]:toolbox')
    expect(args.join(' ')).toContain('--external file[1b:220027]')
    expect(args).toContain('--tcp-established')
    expect(args).toContain('--unprivileged')
    expect(args).not.toContain('--leave-running')
  })

  it("names the boot ID's bind where there is one, and maps it to the restoring sandbox's file", () => {
    const bootId = '--external mnt[/proc/sys/kernel/random/boot_id]:boot-id'
    expect(dumpArgs(MINIMAL_DUMP).join(' ')).not.toContain('boot-id')
    const bootIdMountPoint = '/proc/sys/kernel/random/boot_id'
    expect(dumpArgs({ ...MINIMAL_DUMP, bootIdMountPoint }).join(' ')).toContain(bootId)
    const restore = {
      imagesDir: '/c',
      rootfs: '/r',
      toolboxDir: '/t',
      inheritFds: [],
      actionScript: '/c/s.sh',
      pidFile: '/c/p',
    }
    expect(restoreArgs(restore).join(' ')).not.toContain('boot-id')
    const mapped = restoreArgs({ ...restore, bootIdFile: '/data/sandboxes/s2/boot_id' })
    expect(mapped.join(' ')).toContain('--ext-mount-map boot-id:/data/sandboxes/s2/boot_id')
  })

  it("leaves a snapshot's processes running after the dump", () => {
    const args = dumpArgs({ ...MINIMAL_DUMP, leaveRunning: true })
    expect(args).toContain('--leave-running')
  })

  it('restores detached, with the stand-ins as inherited descriptors and the toolbox mapped', () => {
    const args = restoreArgs({
      imagesDir: '/c',
      rootfs: '/r',
      toolboxDir: '/data/toolbox/abc',
      inheritFds: [
        { fd: 3, key: 'file[1b:220027]' },
        { fd: 4, key: 'file[2a:7]' },
      ],
      actionScript: '/c/setup-namespaces.sh',
      pidFile: '/c/restored.pid',
    })
    const text = args.join(' ')
    expect(args[0]).toBe('restore')
    expect(text).toContain('--ext-mount-map toolbox:/data/toolbox/abc')
    expect(text).toContain('--inherit-fd fd[3]:file[1b:220027] --inherit-fd fd[4]:file[2a:7]')
    expect(text).toContain('--action-script /c/setup-namespaces.sh')
    expect(text).toContain('--tcp-close')
    expect(text).toContain('--restore-detached --pidfile /c/restored.pid')
    expect(args).not.toContain('--unprivileged')
  })
})
