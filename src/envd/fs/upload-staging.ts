import path from 'node:path'

/**
 * Name prefix of the temporary file `POST /files` writes beside its destination before renaming
 * it into place (http/staged-file.ts). E2B's envd writes uploads in place, so a watcher there sees
 * WRITE on the destination and never a temporary name; envd's watchers hide these names and
 * report the rename into place as that WRITE (wire contract §3.4).
 */
export const UPLOAD_STAGING_PREFIX = '.sandbar-upload-'

/** Whether `entryPath` names an upload's temporary file. */
export function isUploadStagingPath(entryPath: string): boolean {
  return path.basename(entryPath).startsWith(UPLOAD_STAGING_PREFIX)
}
