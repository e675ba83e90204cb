// Reusable conformance suite: every SecretStore passes these cases (the embedded home's files,
// the cluster home's Kubernetes Secrets).
//
//   secretStoreConformance('FileSecretStore', async () => ({ store, cleanup }));
//
// Each case gets a fixture of its own and starts with no secret in any namespace it uses. The
// cases write to the namespaces `default`, `team`, `a-ns` and `b-ns` (a store that needs them
// to exist creates them beforehand) and read `empty` and `nowhere`, which hold no secret
// (`nowhere` may not exist at all).

import { expect } from 'chai';

import { ApiError } from '../../pkg/api/errors.js';
import type { SecretStore } from '../../pkg/registry/secrets.js';
import { rejection } from '../support/assert.js';

export interface SecretStoreFixture {
  store: SecretStore;
  /** Removes what the case wrote (or the whole store). */
  cleanup(): Promise<void>;
}

export const SECRET_STORE_NAMESPACES = ['default', 'team', 'a-ns', 'b-ns', 'empty'];

export function secretStoreConformance(name: string, make: () => Promise<SecretStoreFixture>): void {
  describe(`${name} (SecretStore conformance)`, () => {
    let fx: SecretStoreFixture;
    let store: SecretStore;
    beforeEach(async () => {
      fx = await make();
      store = fx.store;
    });
    afterEach(async () => fx?.cleanup());

    it('returns names and keys (sorted) from put, list and delete, never values', async () => {
      const meta = await store.put('default', 'multi', { b: 'value-b', a: 'value-a' });
      expect(meta).to.deep.equal({ name: 'multi', namespace: 'default', keys: ['a', 'b'], allowedUrls: [], createdAt: meta.createdAt });
      expect(Date.parse(meta.createdAt)).to.be.closeTo(Date.now(), 10_000);
      const listed = await store.list();
      expect(JSON.stringify(listed)).to.not.contain('value-');
      expect(listed).to.deep.equal([meta]);
      const removed = await store.delete('default', 'multi');
      expect(removed).to.deep.equal(meta);
      expect(JSON.stringify(removed)).to.not.contain('value-');
      expect(await store.list()).to.deep.equal([]);
      expect(await store.get('default', 'multi')).to.equal(undefined);
    });

    it('gets the values (internal use)', async () => {
      await store.put('team', 'tok', { token: 't1' });
      expect((await store.get('team', 'tok'))!.data).to.deep.equal({ token: 't1' });
      expect(await store.get('team', 'other')).to.equal(undefined);
      expect(await store.get('nowhere', 'tok')).to.equal(undefined);
    });

    it('round-trips any string value (empty, multi-line, non-ASCII, large)', async () => {
      const data = { empty: '', lines: 'line one\nline two\r\n\ttab', unicode: 'clé 🔑 密钥', big: 'x'.repeat(65536) };
      await store.put('default', 'odd', data);
      expect((await store.get('default', 'odd'))!.data).to.deep.equal(data);
      await store.replace('default', 'odd', { k: 'ünï' });
      expect((await store.get('default', 'odd'))!.data).to.deep.equal({ k: 'ünï' });
    });

    it('refuses to create an existing secret (409 AlreadyExists) and keeps the first', async () => {
      await store.put('default', 'tok', { token: 'first' });
      const err = await rejection(store.put('default', 'tok', { token: 'second' }), ApiError);
      expect(err.reason).to.equal('AlreadyExists');
      expect(err.code).to.equal(409);
      expect(err.message).to.not.contain('second');
      expect((await store.get('default', 'tok'))!.data.token).to.equal('first');
    });

    it('lets exactly one of many concurrent creators win', async () => {
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.put('default', 'race', { token: `v${i}` })));
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(refused).to.have.length(9);
      for (const r of refused) expect((r.reason as ApiError).reason).to.equal('AlreadyExists');
      const winner = results.findIndex((r) => r.status === 'fulfilled');
      expect((await store.get('default', 'race'))!.data).to.deep.equal({ token: `v${winner}` });
      expect((await store.list('default')).map((s) => s.name)).to.deep.equal(['race']);
    });

    it('replaces (keeping createdAt) or creates', async () => {
      const first = await store.replace('default', 'tok', { token: 'one' });
      expect(first.created).to.equal(true);
      expect(first.secret).to.deep.include({ name: 'tok', namespace: 'default', keys: ['token'], allowedUrls: [] });
      const second = await store.replace('default', 'tok', { token: 'two', extra: 'x' });
      expect(second.created).to.equal(false);
      expect(second.secret.createdAt).to.equal(first.secret.createdAt);
      expect(second.secret.keys).to.deep.equal(['extra', 'token']);
      expect((await store.get('default', 'tok'))!.data).to.deep.equal({ token: 'two', extra: 'x' });
      // A replace drops keys it does not name.
      await store.replace('default', 'tok', { other: 'y' });
      expect((await store.get('default', 'tok'))!.data).to.deep.equal({ other: 'y' });
      expect((await store.get('default', 'tok'))!.createdAt).to.equal(first.secret.createdAt);
    });

    it('stores the binding; replace without one keeps it, with one replaces it', async () => {
      const made = await store.put('default', 'bound', { token: 'one' }, ['https://a.example:443/api']);
      expect(made.allowedUrls).to.deep.equal(['https://a.example:443/api']);
      const kept = await store.replace('default', 'bound', { token: 'two' });
      expect(kept.secret.allowedUrls).to.deep.equal(['https://a.example:443/api']);
      const changed = await store.replace('default', 'bound', { token: 'three' }, ['https://b.example:443']);
      expect(changed.secret.allowedUrls).to.deep.equal(['https://b.example:443']);
      expect((await store.get('default', 'bound'))!.allowedUrls).to.deep.equal(['https://b.example:443']);
      expect((await store.list('default')).find((s) => s.name === 'bound')!.allowedUrls).to.deep.equal(['https://b.example:443']);
      expect((await store.replace('default', 'fresh', { token: 'x' })).secret.allowedUrls).to.deep.equal([]);
    });

    it('binds an unbound secret once: the first binder wins, a bound secret is left as it is', async () => {
      await store.put('default', 'tofu', { token: 'v' });
      const results = await Promise.all(
        ['http://a.example:80/x', 'http://b.example:80/y', 'http://c.example:80/z'].map((p) => store.bindIfUnbound('default', 'tofu', p)),
      );
      const winner = results[0]!.allowedUrls;
      expect(winner).to.have.length(1);
      for (const r of results) expect(r!.allowedUrls).to.deep.equal(winner);
      expect((await store.get('default', 'tofu'))!.allowedUrls).to.deep.equal(winner);
      expect((await store.get('default', 'tofu'))!.data).to.deep.equal({ token: 'v' });
      expect(await store.bindIfUnbound('default', 'ghost', 'http://a.example:80')).to.equal(undefined);
      // A bound secret keeps its binding.
      const again = await store.bindIfUnbound('default', 'tofu', 'http://d.example:80');
      expect(again!.allowedUrls).to.deep.equal(winner);
      // A binding survives a concurrent replace that does not name one.
      await store.put('default', 'race', { token: 'v1' });
      await Promise.all([store.bindIfUnbound('default', 'race', 'http://a.example:80/mcp'), store.replace('default', 'race', { token: 'v2' })]);
      expect(await store.get('default', 'race')).to.deep.include({ allowedUrls: ['http://a.example:80/mcp'], data: { token: 'v2' } });
    });

    it('lists per namespace and across namespaces, in order', async () => {
      await store.put('b-ns', 'zeta', { k: 'v' });
      await store.put('a-ns', 'beta', { k: 'v' });
      await store.put('a-ns', 'alpha', { k: 'v' });
      expect((await store.list()).map((s) => `${s.namespace}/${s.name}`)).to.deep.equal(['a-ns/alpha', 'a-ns/beta', 'b-ns/zeta']);
      expect((await store.list('a-ns')).map((s) => s.name)).to.deep.equal(['alpha', 'beta']);
      expect(await store.list('empty')).to.deep.equal([]);
      expect(await store.list('nowhere')).to.deep.equal([]);
    });

    it('answers undefined when deleting what is not there', async () => {
      expect(await store.delete('default', 'ghost')).to.equal(undefined);
      expect(await store.delete('nowhere', 'ghost')).to.equal(undefined);
    });

    it('refuses invalid names and namespaces (400 Invalid), naming the field', async () => {
      for (const [ns, n, field] of [
        ['default', '../escape', 'name'],
        ['default', 'a/b', 'name'],
        ['default', 'Tok', 'name'],
        ['default', '', 'name'],
        ['default', 'x'.repeat(64), 'name'],
        ['..', 'tok', 'namespace'],
        ['Team', 'tok', 'namespace'],
      ] as const) {
        for (const op of [
          () => store.put(ns, n, { k: 'v' }),
          () => store.replace(ns, n, { k: 'v' }),
          () => store.get(ns, n),
          () => store.delete(ns, n),
          () => store.bindIfUnbound(ns, n, 'http://a.example:80'),
        ]) {
          const err = await rejection(op(), ApiError);
          expect(err.code, `${ns}/${n}`).to.equal(400);
          expect(err.reason).to.equal('Invalid');
          expect(err.details.causes![0].field).to.equal(field);
        }
      }
      expect((await rejection(store.list('..'), ApiError)).code).to.equal(400);
      expect(await store.list()).to.deep.equal([]);
    });
  });
}
