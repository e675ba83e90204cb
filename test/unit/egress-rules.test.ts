// The tools' egress proxy's decisions, apart from its sockets: the agent's rule by host name,
// the address rule (public only), the CONNECT target's shape, and the template settings that
// give an agent its rule.

import { expect } from 'chai';
import { egressAllowList, templateConfig } from '../../pkg/api/template-settings.js';
import { classifyAddress } from '../../pkg/egress/addresses.js';
import { parseAuthority } from '../../pkg/egress/proxy.js';
import { addressRefusal, hostRefusal } from '../../pkg/egress/rules.js';

describe('egress rules (tools egress proxy)', () => {
  it('None refuses every host; Open allows every host by name', () => {
    for (const host of ['api.github.com', '8.8.8.8', 'localhost']) {
      expect(hostRefusal({ mode: 'None' }, host), host).to.contain('None');
      expect(hostRefusal({ mode: 'Open' }, host), host).to.equal(undefined);
    }
  });

  it('Proxy allows exactly the listed hosts and names below a *.domain, not the domain itself', () => {
    const rule = { mode: 'Proxy' as const, allow: ['api.github.com', '*.pypi.org', '203.0.113.5'] };
    for (const ok of ['api.github.com', 'API.GitHub.com.', 'files.pypi.org', 'a.b.pypi.org', '203.0.113.5'])
      expect(hostRefusal(rule, ok), ok).to.equal(undefined);
    for (const no of ['github.com', 'evil-api.github.com', 'pypi.org', 'notpypi.org', 'pypi.org.evil.test', '203.0.113.6', 'example.com']) {
      expect(hostRefusal(rule, no), no).to.contain('allow-list');
    }
    expect(hostRefusal({ mode: 'Proxy' }, 'api.github.com')).to.contain('allow-list');
  });

  it('allows public addresses only, whatever the rule', () => {
    const classes = ['loopback', 'private', 'link-local', 'metadata', 'reserved'] as const;
    for (const cls of classes) expect(addressRefusal(cls, 'x'), cls).to.contain(cls);
    expect(addressRefusal('public', 'x')).to.equal(undefined);
    for (const a of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '::ffff:192.168.1.1', '64:ff9b::a00:1', '2002:c0a8:101::1', '198.18.0.1', '255.255.255.255']) {
      expect(addressRefusal(classifyAddress(a)!, a), a).to.be.a('string');
    }
    expect(addressRefusal(classifyAddress('8.8.8.8')!, '8.8.8.8')).to.equal(undefined);
  });

  it('parses CONNECT targets: host:port and [v6]:port, nothing else', () => {
    expect(parseAuthority('api.github.com:443')).to.deep.equal({ host: 'api.github.com', port: 443 });
    expect(parseAuthority('[2606:4700::1111]:443')).to.deep.equal({ host: '2606:4700::1111', port: 443 });
    expect(parseAuthority('10.0.0.1:22')).to.deep.equal({ host: '10.0.0.1', port: 22 });
    for (const bad of ['api.github.com', 'a.b:0', 'a.b:65536', 'http://a.b:443', 'user@a.b:443', ':443', 'a b:443', '2606:4700::1111:443']) {
      expect(parseAuthority(bad), bad).to.equal(undefined);
    }
  });

  it('takes egress settings from a template, refusing a bad mode or allow entry with a message', () => {
    expect(templateConfig({ name: 'locked', egress: 'None' })).to.deep.equal({ name: 'locked', egress: 'None' });
    expect(templateConfig({ name: 'listed', egress: 'Proxy', egressAllow: ['api.github.com', '*.pypi.org'] })).to.deep.equal({
      name: 'listed',
      egress: 'Proxy',
      egressAllow: ['api.github.com', '*.pypi.org'],
    });
    expect(templateConfig({ name: 't', egress: 'open' }))
      .to.be.a('string')
      .and.to.contain('egress must be one of Open, Proxy, None');
    expect(templateConfig({ name: 't', egressAllow: ['a.example'] })).to.contain('applies only with egress: Proxy');
    expect(templateConfig({ name: 't', egress: 'Proxy', egressAllow: 'a.example' })).to.contain('must be a list');
    expect(templateConfig({ name: 't', egress: 'Proxy', egressAllow: ['ok.example', 'https://x.example'] })).to.contain('egressAllow [1]');
    expect(egressAllowList(['a.example', '*.pypi.org', '10.0.0.1', 'A.Example'])).to.deep.equal(['a.example', '*.pypi.org', '10.0.0.1']);
    for (const bad of ['', '*', '*.', 'a..b', 'x.example/path', 3, null]) expect(egressAllowList([bad]), String(bad)).to.be.a('string');
  });
});
