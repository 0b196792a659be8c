import { Code, ConnectError } from '@connectrpc/connect'
import { describe, expect, test } from 'vitest'
import { AccessDeniedError } from '../../../../src/envd/fs/access-check.js'
import { connectErrorFromFsError } from '../../../../src/envd/rpc/fs-errors.js'

function systemError(code: string): Error {
  return Object.assign(new Error(`${code}: secret detail`), { code })
}

describe('connectErrorFromFsError', () => {
  test.each([
    ['ENOENT', Code.NotFound, 'file not found: /p'],
    ['EACCES', Code.PermissionDenied, 'permission denied: /p'],
    ['EPERM', Code.PermissionDenied, 'operation not permitted: /p'],
    ['EEXIST', Code.AlreadyExists, 'file already exists: /p'],
    ['ENOTDIR', Code.InvalidArgument, 'not a directory: /p'],
    ['EISDIR', Code.InvalidArgument, 'is a directory: /p'],
    ['EINVAL', Code.InvalidArgument, 'invalid argument: /p'],
    ['ELOOP', Code.FailedPrecondition, 'cyclic symlink or too many levels of symlinks: /p'],
    ['ENOSPC', Code.ResourceExhausted, 'not enough disk space available: /p'],
  ])('%s becomes %s', (errno, code, message) => {
    const error = connectErrorFromFsError(systemError(errno), '/p')
    expect(error.code).toBe(code)
    expect(error.rawMessage).toBe(message)
  })

  test('anything else is internal and keeps the detail on `cause` only', () => {
    const cause = systemError('EIO')
    const error = connectErrorFromFsError(cause, '/p')
    expect(error.code).toBe(Code.Internal)
    expect(error.rawMessage).toBe('filesystem operation failed: /p')
    expect(error.cause).toBe(cause)
    expect(connectErrorFromFsError('not even an error', '/p').code).toBe(Code.Internal)
  })

  test('an access check failure keeps its message naming the denied directory', () => {
    const error = connectErrorFromFsError(new AccessDeniedError('/root', 'write'), '/root/x')
    expect(error.code).toBe(Code.PermissionDenied)
    expect(error.rawMessage).toBe("permission denied: cannot write '/root'")
  })

  test('a ConnectError passes through unchanged', () => {
    const original = new ConnectError('invalid username', Code.Unauthenticated)
    expect(connectErrorFromFsError(original, '/p')).toBe(original)
  })
})
