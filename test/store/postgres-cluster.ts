import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

const run = promisify(execFile)

/** Where Debian's postgresql-15 puts initdb, pg_ctl and postgres. */
export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin'

/**
 * A throwaway PostgreSQL cluster in a temp dir, reachable only through a unix socket there, run
 * as the `postgres` OS user (initdb refuses root). `stop` is safe after a failed `start`.
 */
export class PostgresCluster {
  private dir = ''
  private initialized = false
  private databases = 0
  /** The socket's port number: with no TCP listener it only names the socket file. */
  private readonly port = 5432

  static available(): boolean {
    return ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(POSTGRES_BIN, b)))
  }

  async start(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'sbt-pg-'))
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    await chown(this.dir, Number(stdout.trim()), Number(gid.trim()))
    const data = join(this.dir, 'data')
    await this.asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust'])
    this.initialized = true
    const options = `-k ${this.dir} -p ${this.port} -c listen_addresses=''`
    await this.asPostgres('pg_ctl', [
      '-D',
      data,
      '-o',
      options,
      '-l',
      join(this.dir, 'log'),
      '-w',
      'start',
    ])
  }

  /** A URL to a new, empty database of this cluster. */
  async newDatabase(): Promise<string> {
    this.databases += 1
    const name = `store_${this.databases}`
    const admin = new pg.Client({ connectionString: this.url('postgres') })
    await admin.connect()
    try {
      await admin.query(`CREATE DATABASE ${name}`)
    } finally {
      await admin.end()
    }
    return this.url(name)
  }

  async stop(): Promise<void> {
    const data = join(this.dir, 'data')
    try {
      if (this.initialized && (await this.running(data))) {
        await this.asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
      }
    } finally {
      if (this.dir !== '') await rm(this.dir, { recursive: true, force: true })
    }
  }

  /** `pg_ctl status` exits 0 only while a server runs on the data directory. */
  private async running(data: string): Promise<boolean> {
    try {
      await this.asPostgres('pg_ctl', ['-D', data, 'status'])
      return true
    } catch {
      return false
    }
  }

  private url(database: string): string {
    return `postgres://postgres@${encodeURIComponent(this.dir)}:${this.port}/${database}`
  }

  private async asPostgres(binary: string, args: string[]): Promise<void> {
    await run('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN, binary), ...args])
  }
}
