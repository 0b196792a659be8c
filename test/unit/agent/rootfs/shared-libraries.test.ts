import { describe, expect, it } from 'vitest'
import { parseLdd } from '../../../../src/agent/rootfs/shared-libraries.js'

// `ldd /usr/bin/node` on a project machine (Debian 12, nodesource node 20).
const nodeLdd = `\tlinux-vdso.so.1 (0x00007fd1ed223000)
\tlibdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007fd1ed20d000)
\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007fd1ece00000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007fd1ed12d000)
\tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007fd1ed10d000)
\tlibpthread.so.0 => /lib/x86_64-linux-gnu/libpthread.so.0 (0x00007fd1ed108000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007fd1ecc1e000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007fd1ed225000)
`

describe('parseLdd', () => {
  it('lists each library by soname with its host path, leaving out the vDSO', () => {
    const libraries = parseLdd(nodeLdd)
    expect(libraries.map((library) => library.name)).toEqual([
      'libdl.so.2',
      'libstdc++.so.6',
      'libm.so.6',
      'libgcc_s.so.1',
      'libpthread.so.0',
      'libc.so.6',
      'ld-linux-x86-64.so.2',
    ])
    expect(libraries[1]).toEqual({
      name: 'libstdc++.so.6',
      path: '/lib/x86_64-linux-gnu/libstdc++.so.6',
    })
  })

  it('names the loader by its file name, keeping its path', () => {
    expect(parseLdd(nodeLdd).at(-1)).toEqual({
      name: 'ld-linux-x86-64.so.2',
      path: '/lib64/ld-linux-x86-64.so.2',
    })
  })

  it('reports a missing library with a null path', () => {
    // `ldd /usr/bin/setpriv` in the form glibc's ldd prints for a library it cannot resolve.
    const output = `\tlinux-vdso.so.1 (0x00007ffd5a3f2000)
\tlibcap-ng.so.0 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2da5fc8000)
`
    expect(parseLdd(output)).toEqual([
      { name: 'libcap-ng.so.0', path: null },
      { name: 'libc.so.6', path: '/lib/x86_64-linux-gnu/libc.so.6' },
    ])
  })

  it('skips the per-file headers ldd prints for several files, and static binaries', () => {
    // `ldd pty.node /usr/bin/tini-static`, shortened.
    const output = `/work/main/node_modules/node-pty/build/Release/pty.node:
\tlinux-vdso.so.1 (0x00007f2942583000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f294201e000)
/usr/bin/tini-static:
\tnot a dynamic executable
`
    expect(parseLdd(output)).toEqual([
      { name: 'libc.so.6', path: '/lib/x86_64-linux-gnu/libc.so.6' },
    ])
  })
})
