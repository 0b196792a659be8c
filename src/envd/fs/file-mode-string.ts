/** Linux `st_mode` bits (`<sys/stat.h>`); fixed by the ABI, so spelled out here. */
const S_IFMT = 0o170000
const S_IFSOCK = 0o140000
const S_IFLNK = 0o120000
const S_IFBLK = 0o060000
const S_IFDIR = 0o040000
const S_IFCHR = 0o020000
const S_IFIFO = 0o010000
const S_ISUID = 0o4000
const S_ISGID = 0o2000
const S_ISVTX = 0o1000

/**
 * Go's `FileMode` type letters in the order `FileMode.String()` prints them
 * (`"dalTLDpSugct?"`), each with the `st_mode` test Go's `os.Lstat` uses to set it. Letters Linux
 * `st_mode` cannot express (`a`, `l`, `T`, `?`) never appear.
 */
const typeLetters: ReadonlyArray<readonly [string, (mode: number) => boolean]> = [
  ['d', (mode) => (mode & S_IFMT) === S_IFDIR],
  ['L', (mode) => (mode & S_IFMT) === S_IFLNK],
  ['D', (mode) => (mode & S_IFMT) === S_IFBLK || (mode & S_IFMT) === S_IFCHR],
  ['p', (mode) => (mode & S_IFMT) === S_IFIFO],
  ['S', (mode) => (mode & S_IFMT) === S_IFSOCK],
  ['u', (mode) => (mode & S_ISUID) !== 0],
  ['g', (mode) => (mode & S_ISGID) !== 0],
  ['c', (mode) => (mode & S_IFMT) === S_IFCHR],
  ['t', (mode) => (mode & S_ISVTX) !== 0],
]

/**
 * The `permissions` string of an EntryInfo: Go's `FileMode.String()` of the mode Go's `os.Lstat`
 * derives from a Linux `st_mode` (wire contract §3.4), e.g. `-rw-r--r--`, `drwxr-xr-x`,
 * `Lrwxrwxrwx`, `dtrwxrwxrwx` for a sticky directory and `urwxr-xr-x` for a setuid file. Go
 * prints special bits as leading letters (replacing the `-` of a plain file), never as `s`/`t`
 * inside the rwx triplets.
 */
export function goFileModeString(mode: number): string {
  const letters = typeLetters.filter(([, test]) => test(mode)).map(([letter]) => letter)
  const prefix = letters.length === 0 ? '-' : letters.join('')
  let rwx = ''
  for (let bit = 8; bit >= 0; bit--) {
    rwx += (mode & (1 << bit)) !== 0 ? 'rwx'.charAt((8 - bit) % 3) : '-'
  }
  return prefix + rwx
}
