import { Hono } from 'hono'
import { apiErrors } from '../errors.js'

/** `METHOD /path/:param` as Hono reads it. */
type RouteSpec = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /${string}`

/** A feature of the wire contract Sandbar lacks, the routes that reach it, and what to say. */
interface UnsupportedFeature {
  /** `<Feature> is/are not supported by this Sandbar server yet: <what is missing, what instead>` */
  message: string
  routes: readonly RouteSpec[]
}

/**
 * The routes of wire contract §1.2 (with its 2.51 addendum) that Sandbar does not serve yet,
 * by feature. Without them the SDK reads the 404 as "sandbox not found" or `false`; a 501 that
 * names the feature tells the user where they stand. A feature leaves this table when its
 * routes are built.
 */
export const UNSUPPORTED_FEATURES: readonly UnsupportedFeature[] = [
  {
    message:
      'Secrets are not supported by this Sandbar server yet: it cannot keep values for sandboxes to use. Pass them to the sandbox as environment variables (envs) instead.',
    routes: [
      'GET /secrets',
      'POST /secrets',
      'GET /secrets/:secretID',
      'POST /secrets/:secretID',
      'DELETE /secrets/:secretID',
    ],
  },
  {
    message:
      "Legacy template builds are not supported by this Sandbar server yet: the v1 flow pushes a Docker image to a registry Sandbar does not run. Build templates with the SDK's Template() or a current e2b CLI, which use POST /v3/templates.",
    routes: [
      'POST /templates',
      'POST /templates/:templateID',
      'POST /templates/:templateID/builds/:buildID',
    ],
  },
  {
    message:
      'Listing teams is not supported by this Sandbar server yet: its API key belongs to the one team it created at its first start.',
    routes: ['GET /teams'],
  },
  {
    message:
      "Team metrics are not supported by this Sandbar server yet: it keeps metrics per sandbox only. Read each sandbox's metrics instead (sandbox.getMetrics(), GET /sandboxes/{sandboxID}/metrics).",
    routes: ['GET /teams/:teamID/metrics', 'GET /teams/:teamID/metrics/max'],
  },
  {
    message:
      'Managing API keys and access tokens is not supported by this Sandbar server yet: its API key is E2B_API_KEY in the client.env file sandbar serve writes to its data directory.',
    routes: [
      'POST /access-tokens',
      'DELETE /access-tokens/:accessTokenID',
      'GET /api-keys',
      'POST /api-keys',
      'PATCH /api-keys/:apiKeyID',
      'DELETE /api-keys/:apiKeyID',
    ],
  },
  {
    message:
      'Cluster nodes are not supported by this Sandbar server yet: it runs every sandbox on the one host it serves from.',
    routes: ['GET /nodes', 'GET /nodes/:nodeID', 'POST /nodes/:nodeID'],
  },
  {
    message:
      "The admin API is not supported by this Sandbar server yet: it has no admin token. List and kill the team's sandboxes with its API key instead (GET /v2/sandboxes, DELETE /sandboxes/{sandboxID}).",
    routes: [
      'POST /admin/teams/:teamID/sandboxes/kill',
      'GET /admin/sandboxes/running-counts',
      'POST /admin/teams/:teamID/builds/cancel',
      'POST /admin/teams/:teamID/api-keys',
      'DELETE /admin/teams/:teamID/api-keys/:apiKeyID',
    ],
  },
  {
    message:
      "Sandbox lifecycle events are not supported by this Sandbar server yet: it records them in each sandbox's logs. Read those instead (GET /v2/sandboxes/{sandboxID}/logs).",
    routes: ['GET /events/sandboxes', 'GET /events/sandboxes/:sandboxID'],
  },
  {
    message:
      "Lifecycle webhooks are not supported by this Sandbar server yet: it calls no other server when a sandbox changes. Poll the sandbox list (GET /v2/sandboxes) or each sandbox's logs instead.",
    routes: [
      'GET /events/webhooks',
      'POST /events/webhooks',
      'GET /events/webhooks/:webhookID',
      'PATCH /events/webhooks/:webhookID',
      'DELETE /events/webhooks/:webhookID',
    ],
  },
]

/** Every route of UNSUPPORTED_FEATURES, answering 501 with its feature's message. */
export function unsupportedRoutes() {
  const app = new Hono()
  for (const { message, routes } of UNSUPPORTED_FEATURES) {
    for (const route of routes) {
      const [method, path] = splitRoute(route)
      app.on(method, path, () => {
        throw apiErrors.notImplemented(message)
      })
    }
  }
  return app
}

function splitRoute(route: RouteSpec): [string, string] {
  const space = route.indexOf(' ')
  return [route.slice(0, space), route.slice(space + 1)]
}
