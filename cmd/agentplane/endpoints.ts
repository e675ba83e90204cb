// Addresses of the bound listeners: where local workers dial and what the server reports as its URL.

/** Where local workers dial the control channel: known once its listener is bound. */
export class ChannelEndpoint {
  private bound?: string;

  bind(url: string): void {
    this.bound = url;
  }

  get url(): string {
    if (!this.bound) throw new Error('the worker control channel is not listening yet');
    return this.bound;
  }
}

export function portOf(app: { server: { address(): unknown } }, fallback: number): number {
  const addr = app.server.address() as { port?: number } | string | null;
  return typeof addr === 'object' && addr?.port ? addr.port : fallback;
}

/** Where local workers dial: loopback for wildcard and loopback binds, else the bound address. */
export function loopbackFor(host: string): string {
  if (host === '0.0.0.0' || host === 'localhost' || host.startsWith('127.')) return '127.0.0.1';
  if (host === '::' || host === '::1') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return loopbackFor(host);
  return host.includes(':') ? `[${host}]` : host;
}
