import { afterEach } from 'vitest'
import { createStore, type Store, type StoreConfig } from '../../src/store/index.js'

/** A fresh store with the first team and a second one, to show what each team sees. */
export interface TwoTeamStore {
  store: Store
  teamID: string
  otherTeamID: string
}

/**
 * For a describe block: a function opening a fresh two-team store, each closed after its test.
 */
export function twoTeamStores(newConfig: () => Promise<StoreConfig>): () => Promise<TwoTeamStore> {
  const open: Store[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()))
  })
  return async () => {
    const store = await createStore(await newConfig())
    open.push(store)
    const { team } = await store.ensureFirstTeam()
    const other = await store.createTeam('other', 'other')
    return { store, teamID: team.id, otherTeamID: other.id }
  }
}
