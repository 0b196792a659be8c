import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { StoreConfig, Volume } from '../../src/store/index.js'
import { BASE_TIME } from '../store/store-fixture.js'
import { twoTeamStores } from './two-team-store.js'

/** The VolumeStore part of the Store suite (runStoreCases), on every backend. */
export function runVolumeStoreCases(newConfig: () => Promise<StoreConfig>): void {
  describe('volumes', () => {
    const fresh = twoTeamStores(newConfig)

    function volume(teamID: string, name: string, at: number): Volume {
      return {
        volumeID: randomUUID(),
        teamID,
        name,
        sizeMB: 10240,
        createdAt: new Date(BASE_TIME + at),
        deletedAt: null,
      }
    }

    it("stores volumes per team, finds them by ID and name, lists a team's oldest first", async () => {
      const { store, teamID, otherTeamID } = await fresh()
      const data = volume(teamID, 'data', 2)
      const cache = { ...volume(teamID, 'cache', 1), sizeMB: 16 }
      const theirs = volume(otherTeamID, 'data', 3)
      for (const v of [data, cache, theirs]) await store.insertVolume(v)

      expect(await store.getVolume(data.volumeID)).toEqual(data)
      expect(await store.getVolume(data.volumeID, teamID)).toEqual(data)
      expect(await store.getVolume(data.volumeID, otherTeamID)).toBeUndefined()
      expect(await store.findVolume(teamID, 'cache')).toEqual(cache)
      expect(await store.findVolume(otherTeamID, 'data')).toEqual(theirs)
      expect(await store.findVolume(otherTeamID, 'cache')).toBeUndefined()
      expect(await store.listVolumes(teamID)).toEqual([cache, data])
      expect(await store.listVolumes(otherTeamID)).toEqual([theirs])

      await expect(store.insertVolume(volume(teamID, 'data', 4))).rejects.toThrow()
      await expect(store.insertVolume(volume('no-such-team', 'x', 4))).rejects.toThrow()
      expect(await store.listVolumes(teamID)).toEqual([cache, data])
    })

    it('deletes a volume at once for its team only, freeing its name, and keeps the row until forgotten', async () => {
      const { store, teamID, otherTeamID } = await fresh()
      const data = volume(teamID, 'data', 1)
      await store.insertVolume(data)
      expect(await store.deleteVolume(data.volumeID, otherTeamID, new Date(BASE_TIME + 5))).toBe(
        false,
      )
      expect(await store.deleteVolume(data.volumeID, teamID, new Date(BASE_TIME + 5))).toBe(true)
      expect(await store.deleteVolume(data.volumeID, teamID, new Date(BASE_TIME + 6))).toBe(false)

      expect(await store.getVolume(data.volumeID)).toBeUndefined()
      expect(await store.findVolume(teamID, 'data')).toBeUndefined()
      expect(await store.listVolumes(teamID)).toEqual([])
      const again = volume(teamID, 'data', 7)
      await store.insertVolume(again)
      expect(await store.findVolume(teamID, 'data')).toEqual(again)

      expect(await store.deletedVolumes()).toEqual([
        { ...data, deletedAt: new Date(BASE_TIME + 5) },
      ])
      expect(await store.allVolumeIDs()).toEqual(new Set([data.volumeID, again.volumeID]))
      // Forgetting takes deleted rows only.
      await store.forgetVolume(again.volumeID)
      await store.forgetVolume(data.volumeID)
      expect(await store.deletedVolumes()).toEqual([])
      expect(await store.allVolumeIDs()).toEqual(new Set([again.volumeID]))
    })
  })
}
