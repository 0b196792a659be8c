import type { Hono } from 'hono'
import type { EnvdContext } from '../context.js'
import { composeFiles } from './files-compose.js'
import { downloadFile } from './files-download.js'
import { uploadFiles } from './files-upload.js'

/**
 * envd's file transfer routes (wire contract §3.3). `GET` and `POST /files` pass the global
 * token gate and authorize themselves (token header or signed URL, §3.2); `/files/compose`
 * sits behind the gate like every other route.
 */
export function registerFileRoutes(app: Hono, ctx: EnvdContext): void {
  app.get('/files', (c) => downloadFile(c, ctx))
  app.post('/files', (c) => uploadFiles(c, ctx))
  app.post('/files/compose', (c) => composeFiles(c, ctx))
}
