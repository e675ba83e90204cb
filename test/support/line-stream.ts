// A client for streamed responses of newline-delimited JSON (watch, agents/<name>/log): collects
// the lines as they arrive; `until` waits for a predicate, `ended` for the end of the stream.

import { Changes } from './waiting.js';

export class LineStream<T = any> {
  readonly items: T[] = [];
  status = 0;
  headers?: Headers;
  ended = false;
  private readonly abort = new AbortController();
  private readonly changes = new Changes();

  private constructor() {}

  /** Opens the stream; resolves once the response headers arrived. */
  static async open<T = any>(url: string, headers: Record<string, string> = {}): Promise<LineStream<T>> {
    const s = new LineStream<T>();
    const res = await fetch(url, { headers, signal: s.abort.signal });
    s.status = res.status;
    s.headers = res.headers;
    void s.read(res);
    return s;
  }

  private async read(res: Response): Promise<void> {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) this.items.push(JSON.parse(line) as T);
        }
        this.changes.notify();
      }
      if (buf.trim()) this.items.push(JSON.parse(buf) as T);
    } catch {
      // aborted by close()
    } finally {
      this.ended = true;
      this.changes.notify();
    }
  }

  async until(pred: (items: T[]) => boolean, timeoutMs = 30_000, what = 'condition'): Promise<T[]> {
    const got = (): string => JSON.stringify(this.items).slice(0, 2000);
    await this.changes.until(
      () => pred(this.items),
      timeoutMs,
      (why) => new Error(why === 'broken' ? `stream ended before ${what}; got ${got()}` : `timed out waiting for ${what}; got ${got()}`),
      () => this.ended,
    );
    return this.items;
  }

  /** Waits for the server to end the stream. */
  async end(timeoutMs = 30_000): Promise<T[]> {
    await this.changes.until(
      () => this.ended,
      timeoutMs,
      () => new Error(`stream did not end; got ${JSON.stringify(this.items).slice(0, 2000)}`),
    );
    return this.items;
  }

  close(): void {
    this.abort.abort();
  }
}
