import type { Logger } from '../../logger.js'
import type { WorkerCommand } from '../kernels/kernel.js'
import { snippetsFor } from '../kernels/language.js'
import { Context } from './context.js'

export const DEFAULT_CWD = '/home/user'

/** Contexts in creation order, plus one default context per language (wire contract §1.7). */
export class Contexts {
  private readonly byId = new Map<string, Context>()
  /**
   * Each context's place in the list: taken when its creation starts, so that contexts made
   * at once (the default python and javascript ones) are listed in the order they were asked
   * for, not in the order their workers happened to come up.
   */
  private readonly positions = new Map<string, number>()
  private nextPosition = 0
  private readonly defaults = new Map<string, Promise<Context>>()
  /** Default contexts once created: `default` is python's (wire contract §1.3). */
  private readonly defaultIds = new Map<string, string>()

  constructor(
    private readonly workerCommand: (language: string) => WorkerCommand | undefined,
    private readonly logger: Logger,
    /** Where default contexts and contexts created without a cwd start. */
    readonly defaultCwd = DEFAULT_CWD,
  ) {}

  list(): Context[] {
    const position = (context: Context) => this.positions.get(context.id) ?? 0
    return [...this.byId.values()].sort((a, b) => position(a) - position(b))
  }

  get(id: string): Context | undefined {
    if (id === 'default') return this.byId.get(this.defaultIds.get('python') ?? '')
    return this.byId.get(id)
  }

  /** Throws `Failed to create context: …` or `Failed to set working directory`. */
  async create(language: string, cwd: string): Promise<Context> {
    const command = this.workerCommand(language)
    const snippets = snippetsFor(language)
    if (command === undefined || snippets === undefined) {
      throw new Error(`Failed to create context: No such kernel named ${language}`)
    }
    const context = new Context(language, cwd, command, snippets, this.logger)
    const position = this.nextPosition++
    try {
      await context.start()
    } catch (error) {
      await context.close()
      if (error instanceof Error && error.message === 'Failed to set working directory') throw error
      throw new Error(`Failed to create context: ${error instanceof Error ? error.message : error}`)
    }
    this.byId.set(context.id, context)
    this.positions.set(context.id, position)
    return context
  }

  /** The language's default context, created on first use, once even when asked twice. */
  defaultFor(language: string): Promise<Context> {
    let context = this.defaults.get(language)
    if (context === undefined) {
      context = this.create(language, this.defaultCwd)
      this.defaults.set(language, context)
      context.then(
        (created) => this.defaultIds.set(language, created.id),
        () => this.defaults.delete(language),
      )
    }
    return context
  }

  async remove(context: Context): Promise<void> {
    this.byId.delete(context.id)
    this.positions.delete(context.id)
    for (const [language, id] of this.defaultIds) {
      if (id === context.id) {
        this.defaultIds.delete(language)
        this.defaults.delete(language)
      }
    }
    await context.close()
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.list().map((context) => this.remove(context)))
  }
}
