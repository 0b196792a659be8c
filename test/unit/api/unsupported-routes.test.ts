import { describe, expect, it } from 'vitest'
import { UNSUPPORTED_FEATURES } from '../../../src/api/routes/unsupported-routes.js'

const features = UNSUPPORTED_FEATURES

describe('the routes Sandbar refuses with 501', () => {
  it('name the feature, then what is missing, in one form', () => {
    for (const { message } of features) {
      expect(message).toMatch(
        /^[A-Z][\w ]+ (is|are) not supported by this Sandbar server yet: .+\.$/,
      )
    }
  })

  it('list each route once, so no feature shadows another', () => {
    const routes = features.flatMap((feature) => feature.routes)
    expect(new Set(routes).size).toBe(routes.length)
  })
})
