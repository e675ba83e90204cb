// The Host allow-list of the browser guard (pkg/server/browser-guard.ts) and the audit log's
// redaction of credential-bearing query parameters (pkg/server/audit/redact.ts). The guard's
// requests end to end are in test/security/browser.test.ts.

import { expect } from 'chai';

import { redactRequestUri } from '../../pkg/server/audit/redact.js';
import { hostAllowList, hostName } from '../../pkg/server/browser-guard.js';

describe('browser guard: Host allow-list', () => {
  it('parses Host values', () => {
    expect(hostName('127.0.0.1:8080')).to.equal('127.0.0.1');
    expect(hostName('[::1]:8080')).to.equal('::1');
    expect(hostName('Example.COM.')).to.equal('example.com');
    for (const bad of ['a b', 'x/y', 'user@host', 'host?q', '']) expect(hostName(bad), bad).to.equal(undefined);
  });

  it('allows loopback, the bound host and allowed names; nothing else', () => {
    const ok = hostAllowList({ allowedHosts: ['agents.example', '.corp.example'], bindHost: '10.1.2.3' });
    for (const h of ['127.0.0.1', '127.1.2.3:80', 'localhost:1', '[::1]', '10.1.2.3:8080', 'agents.example', 'a.b.corp.example', 'corp.example'])
      expect(ok(h), h).to.equal(true);
    for (const h of ['evil.example', 'localhost.evil.example', '127.0.0.1.evil.example', 'evilcorp.example', '10.1.2.4', '[::2]', 'agents.example.evil'])
      expect(ok(h), h).to.equal(false);
  });

  it('allows any IP literal on a wildcard bind, but no other name', () => {
    for (const bindHost of ['0.0.0.0', '::']) {
      const ok = hostAllowList({ bindHost });
      expect(ok('192.168.1.5:8080')).to.equal(true);
      expect(ok('[fd00::1]:8080')).to.equal(true);
      expect(ok('evil.example')).to.equal(false);
    }
  });
});

describe('audit: request URI redaction', () => {
  it('replaces the values of credential-bearing parameters and nothing else', () => {
    expect(redactRequestUri('/api/v1/agents')).to.equal('/api/v1/agents');
    expect(redactRequestUri('/api/v1/agents?namespace=a&access_token=xyz')).to.equal('/api/v1/agents?namespace=a&access_token=<redacted>');
    expect(redactRequestUri('/x?Token=1&token=2&TOKEN')).to.equal('/x?Token=<redacted>&token=<redacted>&TOKEN');
    expect(redactRequestUri('/x?access%5Ftoken=s&api_key=k&limit=5#frag')).to.equal('/x?access%5Ftoken=<redacted>&api_key=<redacted>&limit=5#frag');
    expect(redactRequestUri('/x?namespace=token')).to.equal('/x?namespace=token');
  });
});
