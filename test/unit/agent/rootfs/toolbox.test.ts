import { describe, expect, it } from 'vitest'
import { TOOLBOX_MOUNT_POINT, toolboxAt } from '../../../../src/agent/rootfs/toolbox.js'

describe('toolboxAt', () => {
  it('starts tini as PID 1, then envd through the toolbox loader, with one V8 worker and no V8 flags', () => {
    const toolbox = toolboxAt('/var/lib/sandbar/toolbox/abc', false)
    expect(toolbox.mountPoint).toBe(TOOLBOX_MOUNT_POINT)
    expect(toolbox.dir).toBe('/var/lib/sandbar/toolbox/abc')
    expect(toolbox.initArgs(49983)).toEqual([
      '/.sandbar/bin/tini',
      '--',
      '/.sandbar/lib/ld-linux-x86-64.so.2',
      '--library-path',
      '/.sandbar/lib',
      '/.sandbar/bin/node',
      '--v8-pool-size=1',
      '/.sandbar/envd/envd.cjs',
      '--port',
      '49983',
      '--handover-fd',
      '0',
    ])
  })

  it('starts envd through share-memory, with V8 predictable, when envd memory is shared', () => {
    expect(toolboxAt('/t', true).initArgs(49983)).toEqual([
      '/.sandbar/bin/tini',
      '--',
      '/.sandbar/envd/share-memory',
      '/.sandbar/lib/ld-linux-x86-64.so.2',
      '--library-path',
      '/.sandbar/lib',
      '/.sandbar/bin/node',
      '--predictable',
      '/.sandbar/envd/envd.cjs',
      '--port',
      '49983',
      '--handover-fd',
      '0',
    ])
  })
})
