import { randomUUID } from 'node:crypto'
import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import type { BuildContext, StepTools } from './build-context.js'
import { runStepScript } from './run-script.js'
import { StepError } from './step-error.js'
import { copyDestination, copyMode, copyOwner, copySource } from './step-paths.js'
import { COPY_SCRIPT } from './step-scripts.js'

const gunzipAsync = promisify(gunzip)

/**
 * COPY/ADD `[src, dest, user_or_empty, mode_or_empty]` with `filesHash` (§2.2). The archive is
 * unzipped here, so the image needs a `tar` but no gzip; it lands in /tmp under a name of its
 * own and the script removes it again. The context is unchanged.
 */
export async function applyCopy(
  type: string,
  args: string[],
  filesHash: string | undefined,
  context: BuildContext,
  tools: StepTools,
): Promise<BuildContext> {
  const [src = '', dest = '', user = '', mode = ''] = args
  if (args.length < 2)
    throw new StepError(`${type} requires a local path and a container path argument`)
  if (!filesHash) throw new StepError(`${type} requires files hash to be set`)
  const source = copySource(src)
  const destination = copyDestination(dest, context.workdir)
  const owner = copyOwner(user, context.user)
  const fileMode = copyMode(mode)
  const archive = await unzipArchive(type, await tools.files.read(filesHash))
  const archivePath = `/tmp/sandbar-copy-${randomUUID()}.tar`
  await tools.sandbox.upload(archivePath, archive)
  await runStepScript(tools.sandbox, `${type} ${src} ${dest} failed`, COPY_SCRIPT, [
    archivePath,
    source.base,
    source.glob ? '1' : '',
    destination.path,
    destination.directory ? '1' : '',
    owner,
    fileMode,
    context.user,
  ])
  return context
}

async function unzipArchive(type: string, data: Buffer): Promise<Buffer> {
  try {
    return await gunzipAsync(data)
  } catch (error) {
    throw new StepError(
      `${type} files are not a gzip archive: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}
