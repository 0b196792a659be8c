import { describe, expect, test } from 'vitest'
import { goFileModeString } from '../../../../src/envd/fs/file-mode-string.js'

describe('goFileModeString', () => {
  test.each([
    [0o100644, '-rw-r--r--'],
    [0o100755, '-rwxr-xr-x'],
    [0o100000, '----------'],
    [0o100200, '--w-------'],
    [0o040755, 'drwxr-xr-x'],
    [0o120777, 'Lrwxrwxrwx'],
    [0o010644, 'prw-r--r--'],
    [0o140755, 'Srwxr-xr-x'],
    [0o060660, 'Drw-rw----'],
    [0o020666, 'Dcrw-rw-rw-'],
  ])('prints the type letter of st_mode %o as %s', (mode, expected) => {
    expect(goFileModeString(mode)).toBe(expected)
  })

  test.each([
    [0o104755, 'urwxr-xr-x'],
    [0o102755, 'grwxr-xr-x'],
    [0o041777, 'dtrwxrwxrwx'],
    [0o042775, 'dgrwxrwxr-x'],
    [0o106755, 'ugrwxr-xr-x'],
  ])('prints special bits of %o as leading letters: %s', (mode, expected) => {
    expect(goFileModeString(mode)).toBe(expected)
  })
})
