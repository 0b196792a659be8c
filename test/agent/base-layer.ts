import path from 'node:path'
import type { Logger } from 'pino'
import { HostLayerStore } from '../../src/agent/rootfs/layer-store.js'
import {
  buildDebianBase,
  debianBaseLayerID,
  debianBaseRecipe,
} from '../../src/builder/base/debian-base.js'

/**
 * Template layers are cached across runs under this directory: building the Debian base takes
 * about a minute, and its layer ID is its recipe's hash, so it is reused, never leaked.
 */
export const TEMPLATE_CACHE = '/var/cache/sandbar-test/templates'

/** The test cache's layer store (the one `--templates-dir TEMPLATE_CACHE` agents use). */
export function testLayerStore(logger: Logger): HostLayerStore {
  return new HostLayerStore(path.join(TEMPLATE_CACHE, 'layers'), async () => new Set(), logger)
}

/** The Debian base layer in the test cache, built the first time; its layer ID. */
export async function ensureTestBaseLayer(
  logger: Logger,
  onProgress?: (line: string) => void,
): Promise<string> {
  const recipe = await debianBaseRecipe()
  const layerID = debianBaseLayerID(recipe)
  const store = testLayerStore(logger)
  await store.open()
  await store.add(layerID, (dir) => buildDebianBase(recipe, dir, logger, onProgress))
  return layerID
}
