import type { Hono } from 'hono'
import type { Agent } from '../agent/index.js'
import type { Builder } from '../builder/index.js'
import type { Logger } from '../logger.js'
import type { SandboxDirectory } from '../proxy/index.js'
import type { Store } from '../store/index.js'
import { createApiApp } from './app.js'
import { startExpiryLoop } from './expiry-loop.js'
import { startHibernationLoop } from './hibernation-loop.js'
import { layerCollector } from './layer-collection.js'
import { sandboxDirectory } from './sandbox-directory.js'
import { SandboxForks } from './sandbox-forks.js'
import { reconcileSandboxes } from './sandbox-reconcile.js'
import { SandboxService, type SandboxServiceConfig } from './sandbox-service.js'
import { startTelemetryLoop } from './sandbox-telemetry.js'
import { removeStraySnapshots } from './snapshot-collection.js'
import { SnapshotService } from './snapshot-service.js'
import { TemplateService, type TemplateServiceConfig } from './template-service.js'
import { TemplateUploads, type TemplateUploadsConfig } from './template-uploads.js'
import { startVolumeCollection } from './volume-collection.js'
import { ensureVolumes, VolumeService } from './volume-service.js'
import { VolumeTokens } from './volume-tokens.js'
import { WarmPools, type WarmPoolsConfig } from './warm-pools.js'

export { ApiError, apiErrors } from './errors.js'
/** The base template's sizes: what the host's capacity is counted in. */
export { BASE_TEMPLATE, type SystemTemplate } from './system-templates.js'
export { MAX_VOLUME_SIZE_MB, MIN_VOLUME_SIZE_MB } from './volume-service.js'
export type { WarmPoolsConfig } from './warm-pools.js'
export type { SandboxServiceConfig, TemplateService, TemplateServiceConfig, TemplateUploadsConfig }

/** What the control plane needs: where state lives, what runs sandboxes and builds, its limits. */
export interface ControlPlaneOptions extends SandboxServiceConfig, TemplateUploadsConfig {
  store: Store
  agent: Agent
  builder: Builder
  /** Template sizes and the build concurrency limit; E2B's defaults when unset. */
  templateLimits?: TemplateServiceConfig
  /**
   * Remove layers no template needs any more as templates change (default true). Off when
   * other services share the agent's layer store: their layers are not in this store.
   */
  collectLayers?: boolean
  logger: Logger
  /** The sandbox domain the proxy serves, returned with every sandbox (§1.3 `domain`). */
  domain: string
  /** Sandboxes kept started for templates (warm-pools.ts); none by default. */
  warmPools?: WarmPoolsConfig
  /** How long a sandbox stays paused in memory before it hibernates to disk; unset, never. */
  hibernateAfterMs?: number
  volumes: VolumeSettings
}

/** How volumes are made and reached (issue 15). */
export interface VolumeSettings {
  /** Signs volume tokens (HS256, 32 bytes); kept across starts, so tokens outlive a restart. */
  tokenKey: Uint8Array
  /** A volume token's lifetime (wave2-contracts §2.2: 1 h). */
  tokenTtlSeconds: number
  /** The size limit of a volume whose create names none, in MiB. */
  defaultSizeMB: number
}

/** The api role (wire contract §1): the REST app, the proxy's directory and the expiry loop. */
export interface ControlPlane {
  /** The E2B REST API, to serve with any fetch-style server. */
  app: Hono
  /** How the proxy finds sandboxes and wakes paused ones. */
  directory: SandboxDirectory
  /** Templates and builds; `ensureSystemTemplate` is what serve awaits at start. */
  templates: TemplateService
  /** Sandboxes started ahead of creates; serve starts filling them once templates are ready. */
  warmPools: WarmPools
  /** Pauses every running sandbox and hibernates every paused one (`serve --hibernate`). */
  hibernateAll(): Promise<{ hibernated: number; failed: number }>
  /**
   * Stops the expiry, hibernation and telemetry loops and the warm pools' filling, and finishes the kills
   * under way; sandboxes (the pools' too) and the store stay as they are.
   */
  close(): Promise<void>
}

/**
 * Creates the control plane: reconciles the store with the agent (sandbox-reconcile.ts), fails
 * the builds a previous process left unfinished, then starts expiring sandboxes at their
 * timeout (§4.2) and collecting their metrics and logs.
 */
export async function createControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { store, agent, logger } = options
  const reconciled = await reconcileSandboxes(store, agent, logger)
  const releaseLayers =
    options.collectLayers === false ? undefined : layerCollector(store, agent, logger)
  const templates = new TemplateService(store, options.builder, logger, {
    ...options.templateLimits,
    releaseLayers,
    removeSnapshot: (snapshotID) => agent.removeSnapshot(snapshotID),
  })
  await templates.builds.failInterrupted()
  await removeStraySnapshots(store, agent, logger)
  const uploads = new TemplateUploads(store, options.builder.files, options)
  const warmPools = new WarmPools(
    store,
    agent,
    options.warmPools ?? { sizes: new Map(), memoryBudgetMB: 0 },
    logger,
    reconciled.waiting,
  )
  await ensureVolumes(store, agent, logger)
  const volumeCollection = startVolumeCollection(store, agent, logger)
  const service = new SandboxService(
    store,
    agent,
    templates,
    { ...options, releaseLayers, releaseVolumes: volumeCollection.request },
    logger,
    warmPools,
  )
  const expiry = startExpiryLoop(store, service, logger)
  const hibernation =
    options.hibernateAfterMs === undefined
      ? undefined
      : startHibernationLoop(store, agent, options.hibernateAfterMs, logger)
  const telemetry = startTelemetryLoop(service.telemetry, logger)
  // wave2-contracts §2.2: the audience is the API's own name, `https://api.<domain>`.
  const volumeTokens = new VolumeTokens(
    options.volumes.tokenKey,
    `https://api.${options.domain}`,
    options.volumes.tokenTtlSeconds,
  )
  const volumes = new VolumeService(
    store,
    agent,
    volumeTokens,
    options.volumes,
    logger,
    volumeCollection.request,
  )
  return {
    app: createApiApp({
      store,
      service,
      snapshots: new SnapshotService(store, agent, service, logger),
      forks: new SandboxForks(store, agent, service, options.concurrencyLimit, logger),
      templates,
      uploads,
      volumes,
      agent,
      volumeTokens,
      domain: options.domain,
      logger,
    }),
    directory: sandboxDirectory(store, agent, service),
    templates,
    warmPools,
    hibernateAll: () => service.hibernateAll(),
    close: async () => {
      await Promise.all([
        expiry.stop(),
        hibernation?.stop(),
        telemetry.stop(),
        warmPools.close(),
        volumeCollection.stop(),
      ])
      await service.settled()
    },
  }
}
