import { Hono } from 'hono'
import type { Volume } from '../../store/index.js'
import type { AuthEnv } from '../auth.js'
import { jsonBody } from '../schemas/validate.js'
import { newVolumeSchema } from '../schemas/volume-requests.js'
import type { VolumeService, VolumeWithToken } from '../volume-service.js'

/**
 * The volume routes of wave2-contracts §2.1, for the key's team. Replies carry Sandbar's
 * `sizeMB` (and, with a token, `usedMB`) beside the contract's fields; the SDK ignores both.
 */
export function volumeRoutes(service: VolumeService) {
  const app = new Hono<AuthEnv>()

  app.get('/volumes', async (c) => {
    const volumes = await service.list(c.get('team'))
    return c.json(volumes.map(listedVolume))
  })

  app.post('/volumes', jsonBody(newVolumeSchema), async (c) => {
    const { name, sizeMB } = c.req.valid('json')
    return c.json(volumeAndToken(await service.create(c.get('team'), name, sizeMB)), 201)
  })

  app.get('/volumes/:volumeID', async (c) => {
    return c.json(volumeAndToken(await service.get(c.get('team'), c.req.param('volumeID'))))
  })

  app.delete('/volumes/:volumeID', async (c) => {
    await service.delete(c.get('team'), c.req.param('volumeID'))
    return c.body(null, 204)
  })

  return app
}

/** §2.1 `Volume`. */
function listedVolume(volume: Volume) {
  return { volumeID: volume.volumeID, name: volume.name, sizeMB: volume.sizeMB }
}

/** §2.1 `VolumeAndToken`, without `domain` (a BYOC team's; the API's own domain serves it). */
function volumeAndToken({ volume, token, usage }: VolumeWithToken) {
  return { ...listedVolume(volume), token, usedMB: usage.usedMB }
}
