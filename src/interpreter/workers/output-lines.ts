/**
 * One output stream of a cell, sent in whole lines. R writes a line in pieces (`print("a")`
 * is `[1]` then ` "a"\n`), which IRkernel sends as one stream message; here the text after a
 * stream's last newline waits for the rest of its line, or `waitMs` without more output
 * (a progress bar, a prompt), or `flush`.
 */
export class OutputLines {
  private pending = ''
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly send: (text: string) => void,
    private readonly waitMs: number,
  ) {}

  write(text: string): void {
    const all = this.pending + text
    const lineEnd = all.lastIndexOf('\n') + 1
    this.pending = all.slice(lineEnd)
    if (lineEnd > 0) this.send(all.slice(0, lineEnd))
    clearTimeout(this.timer)
    this.timer = this.pending === '' ? undefined : setTimeout(() => this.flush(), this.waitMs)
  }

  /** Sends a line still waiting: before a result, an error or the end of the cell. */
  flush(): void {
    clearTimeout(this.timer)
    const text = this.pending
    this.pending = ''
    if (text !== '') this.send(text)
  }
}
