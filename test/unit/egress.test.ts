// Where credentials and the server's own connections may go: URL prefix matching of secret
// bindings, address classification, and the guarded fetch against a real local listener.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { allowedUrlsCauses, normalizeAllowedUrls } from '../../pkg/api/secret.js';
import { bindingPrefixOf, normalizeUrlPrefix, parseUrlPrefix, urlAllowedBy, urlMatchesPrefix } from '../../pkg/api/url-prefix.js';
import { listMcpTools } from '../../pkg/connector/mcp-tools.js';
import { classifyAddress, classifyHost, EgressRefusedError, fetchOnlyTo, guardedFetch, type Resolve, urlEgressRefusal } from '../../pkg/connector/egress.js';

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
      ['fec0::1', 'private'],
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

  it('classifies every special IPv4 range', () => {
    const cases: [string, string][] = [
      ['0.0.0.0', 'loopback'],
      ['0.255.1.2', 'loopback'], // "this network"
      ['100.64.0.1', 'private'], // carrier-grade NAT
      ['100.127.255.254', 'private'],
      ['100.128.0.1', 'public'],
      ['100.100.100.200', 'metadata'],
      ['192.0.0.8', 'reserved'], // IETF protocol assignments
      ['192.0.2.10', 'reserved'], // TEST-NET-1
      ['198.51.100.7', 'reserved'], // TEST-NET-2
      ['203.0.113.99', 'reserved'], // TEST-NET-3
      ['198.18.0.1', 'reserved'], // benchmarking
      ['198.19.255.255', 'reserved'],
      ['198.20.0.1', 'public'],
      ['192.88.99.1', 'reserved'], // 6to4 relay anycast
      ['224.0.0.1', 'reserved'], // multicast
      ['239.255.255.250', 'reserved'],
      ['240.0.0.1', 'reserved'], // class E
      ['255.255.255.255', 'reserved'], // broadcast
      ['169.254.170.2', 'metadata'],
      ['1.1.1.1', 'public'],
    ];
    for (const [a, cls] of cases) expect(classifyAddress(a), a).to.equal(cls);
  });

  it('classifies IPv6 ranges, and anything outside global unicast as reserved', () => {
    const cases: [string, string][] = [
      ['::', 'loopback'], // unspecified: the host itself
      ['::1', 'loopback'],
      ['ff02::1', 'reserved'], // multicast
      ['ff05::1:3', 'reserved'],
      ['100::1', 'reserved'], // discard
      ['2001:db8::1', 'reserved'], // documentation
      ['3fff::1', 'reserved'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
      ['2001:2::1', 'reserved'], // benchmarking (IETF protocol assignments)
      ['fd12:3456::1', 'private'],
      ['64:ff9b:1::a00:1', 'private'], // local-use NAT64
      ['4000::1', 'reserved'], // not global unicast
      ['2a00:1450:4001::200e', 'public'],
    ];
    for (const [a, cls] of cases) expect(classifyAddress(a), a).to.equal(cls);
  });

  it('classifies IPv6 forms that carry an IPv4 address by that address: mapped, translated, compatible, NAT64, 6to4', () => {
    const cases: [string, string][] = [
      // IPv4-mapped ::ffff:0:0/96
      ['::ffff:192.168.0.1', 'private'],
      ['::ffff:c0a8:1', 'private'],
      ['::ffff:198.18.0.1', 'reserved'],
      ['::ffff:8.8.8.8', 'public'],
      ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
      // IPv4-translated ::ffff:0:0:0/96
      ['::ffff:0:10.1.2.3', 'private'],
      ['::ffff:0:169.254.169.254', 'metadata'],
      ['::ffff:0:8.8.4.4', 'public'],
      // IPv4-compatible ::/96 (deprecated)
      ['::127.0.0.1', 'loopback'],
      ['::10.0.0.1', 'private'],
      ['::0.0.0.2', 'loopback'],
      // NAT64 64:ff9b::/96
      ['64:ff9b::127.0.0.1', 'loopback'],
      ['64:ff9b::a00:1', 'private'], // 10.0.0.1
      ['64:ff9b::a9fe:a9fe', 'metadata'], // 169.254.169.254
      ['64:ff9b::224.0.0.1', 'reserved'],
      ['64:ff9b::808:808', 'public'],
      // 6to4 2002::/16: the IPv4 address in the next 32 bits
      ['2002:c0a8:101::1', 'private'], // 192.168.1.1
      ['2002:7f00:1::', 'loopback'],
      ['2002:a9fe:a9fe::1', 'metadata'],
      ['2002:c612:1::1', 'reserved'], // 198.18.0.1
      ['2002:808:808::1', 'public'],
    ];
    for (const [a, cls] of cases) expect(classifyAddress(a), a).to.equal(cls);
  });

  it('refuses reserved addresses always, and private forms of IPv6 unless allowed', () => {
    const strict = { allowPrivate: false };
    const open = { allowPrivate: true };
    for (const url of [
      'http://198.18.0.1/mcp',
      'http://255.255.255.255/',
      'http://224.0.0.1/',
      'http://[ff02::1]/',
      'http://[2001:db8::1]/',
      'http://[64:ff9b::c612:1]/',
    ]) {
      expect(urlEgressRefusal(url, strict), url).to.contain('reserved');
      expect(urlEgressRefusal(url, open), url).to.contain('reserved');
    }
    for (const url of ['http://[64:ff9b::a00:1]/', 'http://[2002:c0a8:101::1]/', 'http://[::ffff:0:10.1.2.3]/', 'http://100.64.0.1/']) {
      expect(urlEgressRefusal(url, strict), url).to.contain('private');
      expect(urlEgressRefusal(url, open), url).to.equal(undefined);
    }
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
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00:ec2::254]/',
      'http://metadata.google.internal/computeMetadata/v1',
      'http://169.254.1.1:8080/mcp',
      'http://[fe80::1]/mcp',
    ]) {
      expect(urlEgressRefusal(url, strict), url).to.be.a('string');
      expect(urlEgressRefusal(url, open), url).to.be.a('string');
    }
    expect(urlEgressRefusal('http://169.254.169.254/', open)).to.contain('metadata');
    expect(urlEgressRefusal('http://169.254.1.1/', open)).to.contain('link-local');
    // The URL parser's canonical form: decimal and hex IPv4 notations are the same address.
    for (const url of [
      'http://127.0.0.1:9/mcp',
      'http://localhost/mcp',
      'http://[::1]/',
      'http://10.0.0.8/',
      'http://192.168.0.2/',
      'http://2130706433/',
      'http://0x7f.1/',
    ]) {
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
      if (req.url === '/redirect307') return void res.writeHead(307, { location: '/elsewhere' }).end();
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
    const listing = await listMcpTools(
      `http://tools.rebind.test:${port}/mcp`,
      { Authorization: 'Bearer tok' },
      {
        fetch: guardedFetch({ allowPrivate: false }, resolver({ 'tools.rebind.test': '10.0.0.7' })),
        timeoutMs: 2_000,
      },
    );
    expect(listing).to.deep.include({ ok: false, phase: 'Error' });
    expect((listing as { message: string }).message)
      .to.contain('does not connect')
      .and.to.contain('resolves to 10.0.0.7');
    expect(hits.length).to.equal(before);
  });

  it('returns redirects instead of following them', async () => {
    const f = guardedFetch({ allowPrivate: true });
    const res = await f(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal('/elsewhere');
    expect(hits.at(-1)).to.match(/^GET \/redirect/);
  });

  it('sends only to the bound URL: a same-origin redirect is not followed with the credential', async () => {
    const bound = `http://127.0.0.1:${port}/redirect`;
    const f = fetchOnlyTo(bound, guardedFetch({ allowPrivate: true }));
    expect((await f(bound)).status).to.equal(302);
    const before = hits.length;
    const e = await refusal(f(`http://127.0.0.1:${port}/elsewhere`, { headers: { authorization: 'Bearer tok' } }));
    expect(e.message).to.contain('redirects are not followed');
    expect(hits.length).to.equal(before);
    // The MCP SDK follows a same-origin 307 itself, with the same headers: through this fetch it cannot.
    const bound307 = `http://127.0.0.1:${port}/redirect307`;
    const listing = await listMcpTools(
      bound307,
      { Authorization: 'Bearer tok' },
      { fetch: fetchOnlyTo(bound307, guardedFetch({ allowPrivate: true })), timeoutMs: 2_000 },
    );
    expect(listing.ok).to.equal(false);
    expect(hits.slice(before).filter((h) => h.includes('/elsewhere'))).to.deep.equal([]);
    // Without it the credential would have gone there: the attack this closes.
    await listMcpTools(bound307, { Authorization: 'Bearer tok' }, { fetch: guardedFetch({ allowPrivate: true }), timeoutMs: 2_000 });
    expect(hits.slice(before).filter((h) => h.includes('/elsewhere'))).to.deep.equal(['POST /elsewhere Bearer tok']);
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
