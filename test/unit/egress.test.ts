// Where credentials and the server's own connections may go: URL prefix matching of secret
// bindings, address classification, and the guarded fetch against a real local listener.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { allowedUrlsCauses, normalizeAllowedUrls } from '../../pkg/api/secret.js';
import { bindingPrefixOf, normalizeUrlPrefix, parseUrlPrefix, urlAllowedBy, urlMatchesPrefix } from '../../pkg/api/url-prefix.js';
import { listMcpTools } from '../../pkg/connector/mcp-tools.js';
import { classifyAddress, classifyHost, EgressRefusedError, guardedFetch, type Resolve, urlEgressRefusal } from '../../pkg/connector/egress.js';

describe('URL prefixes (secret bindings)', () => {
  it('normalizes: scheme and host lowercased, default port explicit, no trailing slash', () => {
    expect(normalizeUrlPrefix('HTTPS://API.Example.COM/v1/')).to.equal('https://api.example.com:443/v1');
    expect(normalizeUrlPrefix('http://a.example')).to.equal('http://a.example:80');
    expect(normalizeUrlPrefix('http://a.example/')).to.equal('http://a.example:80');
    expect(normalizeUrlPrefix('http://a.example:8080/mcp')).to.equal('http://a.example:8080/mcp');
    expect(normalizeUrlPrefix('https://a.example:443/x')).to.equal('https://a.example:443/x');
    expect(normalizeUrlPrefix('http://[::1]:9/mcp')).to.equal('http://[::1]:9/mcp');
    expect(normalizeAllowedUrls(['https://a.example/api/', 'HTTPS://a.example:443/api', 'http://b.example'])).to.deep.equal([
      'http://b.example:80',
      'https://a.example:443/api',
    ]);
  });

  it('refuses what is not an http(s) prefix, credentials, queries and fragments', () => {
    for (const bad of ['ftp://a.example', 'a.example/api', 'https://u:p@a.example', 'https://a.example/?x=1', 'https://a.example/#f', 'https://a.example/?']) {
      expect(parseUrlPrefix(bad), bad).to.be.a('string');
    }
    expect(allowedUrlsCauses(['https://ok.example', 'nope']).map((c) => c.field)).to.deep.equal(['allowedUrls[1]']);
  });

  it('matches on segment boundaries: /api allows /api and /api/..., not /apiary', () => {
    const p = 'https://a.example/api';
    expect(urlMatchesPrefix('https://a.example/api', p)).to.equal(true);
    expect(urlMatchesPrefix('https://a.example/api/', p)).to.equal(true);
    expect(urlMatchesPrefix('https://a.example/api/v1/mcp?x=1', p)).to.equal(true);
    expect(urlMatchesPrefix('https://a.example/apiary', p)).to.equal(false);
    expect(urlMatchesPrefix('https://a.example/', p)).to.equal(false);
    expect(urlMatchesPrefix('https://a.example/API', p)).to.equal(false);
    // Dot segments are resolved before matching.
    expect(urlMatchesPrefix('https://a.example/api/../admin', p)).to.equal(false);
    expect(urlMatchesPrefix('https://a.example/api/%2e%2e/admin', p)).to.equal(false);
    expect(urlMatchesPrefix('https://a.example/other/../api/x', p)).to.equal(true);
  });

  it('compares normalized origins: case, default ports, scheme, host and port all count', () => {
    expect(urlMatchesPrefix('HTTPS://A.EXAMPLE:443/api/x', 'https://a.example/api')).to.equal(true);
    expect(urlMatchesPrefix('https://a.example/api', 'https://a.example:443/api')).to.equal(true);
    expect(urlMatchesPrefix('http://a.example/api', 'https://a.example/api')).to.equal(false);
    expect(urlMatchesPrefix('https://a.example:8443/api', 'https://a.example/api')).to.equal(false);
    expect(urlMatchesPrefix('https://a.example.evil.test/api', 'https://a.example/api')).to.equal(false);
    expect(urlMatchesPrefix('https://evil.test/a.example/api', 'https://a.example')).to.equal(false);
    expect(urlMatchesPrefix('https://a.example@evil.test/api', 'https://a.example')).to.equal(false);
    // A root prefix allows every path of the origin.
    expect(urlMatchesPrefix('https://a.example/anything/at/all', 'https://a.example')).to.equal(true);
    expect(urlAllowedBy('http://127.0.0.1:5/mcp', ['https://a.example', 'http://127.0.0.1:5/mcp'])).to.equal(true);
    expect(urlAllowedBy('http://127.0.0.1:6/mcp', ['http://127.0.0.1:5/mcp'])).to.equal(false);
    expect(urlAllowedBy('http://127.0.0.1:5/mcp', [])).to.equal(false);
  });

  it('binds on first use to the origin and path, without the query', () => {
    expect(bindingPrefixOf('http://127.0.0.1:4000/mcp?session=1')).to.equal('http://127.0.0.1:4000/mcp');
    expect(bindingPrefixOf('https://Tools.Example/')).to.equal('https://tools.example:443');
    expect(bindingPrefixOf('not a url')).to.equal(undefined);
  });
});

describe('address classification (server egress)', () => {
  it('classifies IPv4 and IPv6 addresses', () => {
    const cases: [string, string][] = [
      ['169.254.169.254', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      ['fd00:ec2:0:0:0:0:0:254', 'metadata'],
      ['169.254.10.1', 'link-local'],
      ['fe80::1', 'link-local'],
      ['febf::1', 'link-local'],
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['0.0.0.0', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['fc00::1', 'private'],
      ['fdab::1', 'private'],
      ['172.32.0.1', 'public'],
      ['8.8.8.8', 'public'],
      ['2606:4700::1111', 'public'],
      ['fec0::1', 'public'],
      // IPv4-mapped and -compatible IPv6 are their IPv4 address.
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:169.254.169.254', 'metadata'],
      ['::ffff:a9fe:101', 'link-local'],
      ['::ffff:10.0.0.1', 'private'],
      ['[::1]', 'loopback'],
    ];
    for (const [a, cls] of cases) expect(classifyAddress(a), a).to.equal(cls);
    expect(classifyAddress('example.com')).to.equal(undefined);
  });

  it('classifies hosts as written: names of the metadata service and localhost', () => {
    expect(classifyHost('metadata.google.internal')).to.equal('metadata');
    expect(classifyHost('METADATA.GOOGLE.INTERNAL.')).to.equal('metadata');
    expect(classifyHost('localhost')).to.equal('loopback');
    expect(classifyHost('api.localhost')).to.equal('loopback');
    expect(classifyHost('[fe80::1]')).to.equal('link-local');
    expect(classifyHost('tools.example.com')).to.equal('public');
  });

  it('refuses link-local and metadata always, loopback and private unless allowed', () => {
    const strict = { allowPrivate: false };
    const open = { allowPrivate: true };
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/computeMetadata/v1', 'http://169.254.1.1:8080/mcp', 'http://[fe80::1]/mcp']) {
      expect(urlEgressRefusal(url, strict), url).to.be.a('string');
      expect(urlEgressRefusal(url, open), url).to.be.a('string');
    }
    expect(urlEgressRefusal('http://169.254.169.254/', open)).to.contain('metadata');
    expect(urlEgressRefusal('http://169.254.1.1/', open)).to.contain('link-local');
    // The URL parser's canonical form: decimal and hex IPv4 notations are the same address.
    for (const url of ['http://127.0.0.1:9/mcp', 'http://localhost/mcp', 'http://[::1]/', 'http://10.0.0.8/', 'http://192.168.0.2/', 'http://2130706433/', 'http://0x7f.1/']) {
      expect(urlEgressRefusal(url, strict), url).to.contain('--allow-private-connector-urls');
      expect(urlEgressRefusal(url, open), url).to.equal(undefined);
    }
    expect(urlEgressRefusal('https://tools.example.com/mcp', strict)).to.equal(undefined);
  });
});

describe('guarded fetch (connect-time check)', () => {
  let server: Server;
  let port: number;
  const hits: string[] = [];
  /** A resolver for names that are not in any DNS: the test decides what they resolve to. */
  const resolver =
    (map: Record<string, string>): Resolve =>
    (hostname, _opts, cb) => {
      const address = map[hostname];
      if (!address) return cb(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      cb(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
    };
  const refusal = async (p: Promise<unknown>): Promise<EgressRefusedError> => {
    try {
      await p;
    } catch (err) {
      let e: unknown = err;
      while (e && !(e instanceof EgressRefusedError)) e = (e as { cause?: unknown }).cause;
      expect(e, String(err)).to.be.instanceOf(EgressRefusedError);
      return e as EgressRefusedError;
    }
    throw new Error('expected a refusal');
  };

  before(async () => {
    server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      if (req.url === '/redirect') return void res.writeHead(302, { location: '/elsewhere' }).end();
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'x-multi': ['a', 'b'] }).end(JSON.stringify({ got: body })));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses a loopback literal and "localhost" without the option, before any byte is sent', async () => {
    const f = guardedFetch({ allowPrivate: false });
    const before = hits.length;
    const lit = await refusal(f(`http://127.0.0.1:${port}/x`, { headers: { authorization: 'Bearer t' } }));
    expect(lit.message).to.contain('loopback');
    await refusal(f(`http://localhost:${port}/x`));
    expect(hits.length).to.equal(before);
  });

  it('checks the address a name resolves to, inside the connection: a public name resolving to a private address is refused', async () => {
    const f = guardedFetch({ allowPrivate: false }, resolver({ 'tools.rebind.test': '127.0.0.1', 'meta.rebind.test': '169.254.169.254' }));
    const before = hits.length;
    const e = await refusal(f(`http://tools.rebind.test:${port}/x`, { method: 'POST', body: '{}', headers: { authorization: 'Bearer t' } }));
    expect(e.message).to.contain('resolves to 127.0.0.1');
    const m = await refusal(guardedFetch({ allowPrivate: true }, resolver({ 'meta.rebind.test': '169.254.169.254' }))(`http://meta.rebind.test:${port}/`));
    expect(m.message).to.contain('metadata');
    expect(hits.length).to.equal(before);
  });

  it('connects to the address it checked, and behaves as fetch: method, headers, body, status, multi-valued headers', async () => {
    const f = guardedFetch({ allowPrivate: true }, resolver({ 'tools.rebind.test': '127.0.0.1' }));
    const res = await f(`http://tools.rebind.test:${port}/echo`, { method: 'POST', body: 'hello', headers: { authorization: 'Bearer tok' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json');
    expect(res.headers.get('x-multi')).to.equal('a, b');
    expect(await res.json()).to.deep.equal({ got: 'hello' });
    expect(hits.at(-1)).to.equal('POST /echo Bearer tok');
  });

  it('makes a tools listing fail as Error, saying why, when the name resolves to a refused address', async () => {
    const before = hits.length;
    const listing = await listMcpTools(`http://tools.rebind.test:${port}/mcp`, { Authorization: 'Bearer tok' }, {
      fetch: guardedFetch({ allowPrivate: false }, resolver({ 'tools.rebind.test': '10.0.0.7' })),
      timeoutMs: 2_000,
    });
    expect(listing).to.deep.include({ ok: false, phase: 'Error' });
    expect((listing as { message: string }).message).to.contain('does not connect').and.to.contain('resolves to 10.0.0.7');
    expect(hits.length).to.equal(before);
  });

  it('returns redirects instead of following them', async () => {
    const f = guardedFetch({ allowPrivate: true });
    const res = await f(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal('/elsewhere');
    expect(hits.at(-1)).to.match(/^GET \/redirect/);
  });

  it('aborts with the signal', async () => {
    const f = guardedFetch({ allowPrivate: true });
    const ac = new AbortController();
    ac.abort();
    let err: unknown;
    try {
      await f(`http://127.0.0.1:${port}/x`, { signal: ac.signal });
    } catch (e) {
      err = e;
    }
    expect((err as Error | undefined)?.name).to.equal('AbortError');
  });
});
