// A client for streamed responses of newline-delimited JSON (watch, agents/<name>/log): collects
// the lines as they arrive; `until` waits for a predicate, `ended` for the end of the stream.

export class LineStream<T = any> {
  readonly items: T[] = [];
  status = 0;
  headers?: Headers;
  ended = false;
  private readonly abort = new AbortController();
  private waiters: (() => void)[] = [];

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
        this.notify();
      }
      if (buf.trim()) this.items.push(JSON.parse(buf) as T);
    } catch {
      // aborted by close()
    } finally {
      this.ended = true;
      this.notify();
    }
  }

  async until(pred: (items: T[]) => boolean, timeoutMs = 30_000, what = 'condition'): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.items)) {
      if (this.ended) throw new Error(`stream ended before ${what}; got ${JSON.stringify(this.items).slice(0, 2000)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.items).slice(0, 2000)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.items;
  }

  /** Waits for the server to end the stream. */
  async end(timeoutMs = 30_000): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`stream did not end; got ${JSON.stringify(this.items).slice(0, 2000)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.items;
  }

  close(): void {
    this.abort.abort();
  }

  private notify(): void {
    this.waiters.splice(0).forEach((fn) => fn());
  }
}
