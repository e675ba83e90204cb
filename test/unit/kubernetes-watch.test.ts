// The Kubernetes store's watch fan-out and reconnection, against a scripted stand-in for the
// client library's Watch: what a real API server does rarely (410 on reconnect, errors) on cue.

import { setTimeout as sleep } from 'node:timers/promises';

import type { Watch } from '@kubernetes/client-node';
import { expect } from 'chai';

import type { ApiError } from '../../pkg/api/errors.js';
import { KindHub } from '../../pkg/registry/kubernetes/kind-hub.js';
import type { StorageRecord } from '../../pkg/registry/kubernetes/records.js';
import type { StoredObject, WatchEvent } from '../../pkg/registry/store.js';

interface Call {
  params: { resourceVersion: string };
  send(type: string, obj: unknown): void;
  end(err?: unknown): void;
  aborted: boolean;
}

class FakeWatch {
  readonly calls: Call[] = [];
  async watch(
    _path: string,
    params: { resourceVersion: string },
    cb: (type: string, obj: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const ctl = new AbortController();
    const call: Call = { params, send: cb, end: (err) => done(err ?? null), aborted: false };
    ctl.signal.addEventListener('abort', () => (call.aborted = true));
    this.calls.push(call);
    return ctl;
  }
  last(): Call {
    return this.calls.at(-1)!;
  }
}

const rec = (name: string, rv: number, size = 1, uid = `uid-${name}`): StorageRecord => ({
  apiVersion: 'internal.agentplane.io/v1alpha1',
  kind: 'ThingRecord',
  metadata: { name, namespace: 'default', uid, resourceVersion: String(rv), creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { generation: 1, object: { apiVersion: 'test/v1', kind: 'Thing', spec: { size }, status: {} } },
});

const tick = (): Promise<void> => sleep(5);

describe('Kubernetes store watch (KindHub, scripted server)', () => {
  let fake: FakeWatch;
  let current: number;
  let stored: StorageRecord[];
  let warnings: string[];
  let hub: KindHub;

  beforeEach(() => {
    fake = new FakeWatch();
    current = 100;
    stored = [];
    warnings = [];
    hub = new KindHub(
      {
        watch: fake as unknown as Watch,
        path: '/apis/internal.agentplane.io/v1alpha1/thingrecords',
        list: async () => ({ resourceVersion: String(current), items: stored }),
        timeoutSeconds: () => 1,
        warn: (msg) => warnings.push(msg),
      },
      200,
    );
  });

  afterEach(() => hub.close());

  const names = (evs: WatchEvent<StoredObject>[]): string[] => evs.map((e) => `${e.type}:${e.object.metadata.name}:${e.object.metadata.resourceVersion}`);

  it('shares one upstream, started at the current version, among "from now" subscribers', async () => {
    const a: WatchEvent<StoredObject>[] = [];
    const b: WatchEvent<StoredObject>[] = [];
    const stopA = hub.subscribe((e) => a.push(e), {});
    const stopB = hub.subscribe((e) => b.push(e), { resourceVersion: '0' });
    await hub.beforeWrite();
    await tick();
    expect(fake.calls).to.have.length(1);
    expect(fake.last().params).to.include({ resourceVersion: '100', allowWatchBookmarks: true });
    fake.last().send('ADDED', rec('x', 101));
    fake.last().send('MODIFIED', rec('x', 102, 2));
    expect(names(a)).to.deep.equal(['ADDED:x:101', 'MODIFIED:x:102']);
    expect(a[1].object).to.deep.equal(b[1].object);
    expect(a[1].object).to.not.equal(b[1].object); // each subscriber has its own copy
    stopA();
    expect(fake.last().aborted).to.equal(false);
    stopB();
    expect(fake.last().aborted).to.equal(true);
  });

  it('reconnects from the last version seen (bookmarks included) and drops repeats', async () => {
    const evs: WatchEvent<StoredObject>[] = [];
    hub.subscribe((e) => evs.push(e), {});
    await hub.beforeWrite();
    await tick();
    fake.last().send('ADDED', rec('x', 101));
    fake.last().send('BOOKMARK', { metadata: { resourceVersion: '150' } });
    fake.last().end(); // the server's timeout
    await tick();
    expect(fake.calls).to.have.length(2);
    expect(fake.last().params.resourceVersion).to.equal('150');
    fake.last().send('ADDED', rec('x', 101)); // a repeat must not be delivered twice
    fake.last().send('DELETED', rec('x', 151));
    expect(names(evs)).to.deep.equal(['ADDED:x:101', 'DELETED:x:151']);
  });

  it('backs off and retries after an error, from the same version', async () => {
    const evs: WatchEvent<StoredObject>[] = [];
    hub.subscribe((e) => evs.push(e), {});
    await hub.beforeWrite();
    await tick();
    fake.last().send('ADDED', rec('x', 101));
    fake.last().send('ERROR', { code: 500, message: 'etcd hiccup' });
    fake.last().end();
    await tick();
    expect(fake.calls).to.have.length(1); // not at once: after a backoff
    await sleep(150);
    expect(fake.calls).to.have.length(2);
    fake.last().end(Object.assign(new Error('Forbidden'), { statusCode: 403 }));
    await sleep(400);
    expect(fake.calls.length).to.be.at.least(3);
    expect(fake.calls.slice(1).map((c) => c.params.resourceVersion)).to.satisfy((rvs: string[]) => rvs.every((r) => r === '101'));
    expect(warnings.some((w) => w.includes('reconnecting'))).to.equal(true);
  });

  it('on 410 after a reconnect, re-lists and emits what changed meanwhile (informer-style)', async () => {
    const evs: WatchEvent<StoredObject>[] = [];
    const errors: ApiError[] = [];
    stored = [rec('kept', 90), rec('changed', 91), rec('gone', 92), rec('reborn', 93, 1, 'uid-old')];
    hub.subscribe((e) => evs.push(e), { onError: (e) => errors.push(e) });
    await hub.beforeWrite();
    await tick();
    expect(evs).to.deep.equal([]); // the start-up list is the baseline, not events
    fake.last().send('ADDED', rec('x', 101));
    fake.last().end();
    await tick();
    // Meanwhile the API server restarted and cannot replay history after 101.
    current = 500;
    stored = [rec('kept', 90), rec('changed', 320, 2), rec('reborn', 310, 1, 'uid-new'), rec('x', 101), rec('new', 330)];
    let settled = false;
    const write = hub.afterWrite('330').then(() => (settled = true));
    fake.last().send('ERROR', { code: 410, reason: 'Expired', message: 'too old resource version: 101 (300)' });
    fake.last().end();
    await tick();
    expect(names(evs)).to.deep.equal(['ADDED:x:101', 'DELETED:reborn:310', 'ADDED:reborn:310', 'MODIFIED:changed:320', 'ADDED:new:330', 'DELETED:gone:500']);
    expect(evs[1].object.metadata.uid).to.equal('uid-old');
    expect(errors).to.deep.equal([]); // a "from now" watch does not end
    await write; // a write the catch-up covered counts as delivered
    expect(settled).to.equal(true);
    expect(fake.last().params.resourceVersion).to.equal('500');
    fake.last().send('ADDED', rec('y', 501));
    expect(names(evs).at(-1)).to.equal('ADDED:y:501');
  });

  it('a watch from a version without onError continues from now after a 410', async () => {
    const evs: WatchEvent<StoredObject>[] = [];
    hub.subscribe((e) => evs.push(e), { resourceVersion: '50' });
    await tick();
    current = 600;
    fake.last().send('ERROR', { code: 410, message: 'too old resource version: 50 (300)' });
    fake.last().end();
    await tick();
    expect(fake.calls.map((c) => c.params.resourceVersion)).to.deep.equal(['50', '600']);
    expect(warnings.some((w) => w.includes('continuing from now'))).to.equal(true);
    fake.last().send('ADDED', rec('z', 601));
    expect(names(evs)).to.deep.equal(['ADDED:z:601']);
  });

  it('gives a subscriber from a resourceVersion its own upstream; a 410 (HTTP or event) goes to onError', async () => {
    const evs: WatchEvent<StoredObject>[] = [];
    const errors: ApiError[] = [];
    hub.subscribe((e) => evs.push(e), { resourceVersion: '42', onError: (e) => errors.push(e) });
    await tick();
    expect(fake.calls.map((c) => c.params.resourceVersion)).to.deep.equal(['42']);
    fake.last().send('MODIFIED', rec('x', 43));
    fake.last().end(Object.assign(new Error('Gone'), { statusCode: 410 }));
    await tick();
    expect(names(evs)).to.deep.equal(['MODIFIED:x:43']);
    expect(errors).to.have.length(1);
    expect(errors[0].reason).to.equal('Expired');
    expect(fake.calls).to.have.length(1); // no reconnect after it ended
  });

  it('lets a write wait until the watches delivered it, but not forever', async () => {
    hub.subscribe(() => undefined, {});
    await hub.beforeWrite();
    await tick();
    let settled = false;
    const write = hub.afterWrite('105').then(() => (settled = true));
    await tick();
    fake.last().send('ADDED', rec('x', 104));
    await tick();
    expect(settled).to.equal(false);
    fake.last().send('ADDED', rec('y', 105));
    await write;
    // Nothing arrives for 106: the wait ends after the settle timeout (200 ms here).
    const t0 = Date.now();
    await hub.afterWrite('106');
    expect(Date.now() - t0).to.be.within(150, 1000);
    // A version at or before where the watch started needs no wait.
    await hub.afterWrite('100');
  });

  it('hands a deletion to the deleter with the watch’s object, and isolates throwing subscribers', async () => {
    const seen: string[] = [];
    hub.subscribe(() => {
      throw new Error('bad subscriber');
    }, {});
    hub.subscribe((e) => seen.push(e.type), {});
    await hub.beforeWrite();
    await tick();
    const deletion = hub.expectDeletion('uid-x');
    fake.last().send('DELETED', rec('x', 110, 3));
    const got = await deletion.result;
    expect(got!.metadata.resourceVersion).to.equal('110');
    expect(seen).to.deep.equal(['DELETED']);
    expect(warnings).to.include('storage watch: a subscriber threw');
  });

  it('stops every upstream on close', async () => {
    hub.subscribe(() => undefined, {});
    hub.subscribe(() => undefined, { resourceVersion: '7', onError: () => undefined });
    await tick();
    hub.close();
    expect(fake.calls.every((c) => c.aborted)).to.equal(true);
    expect(hub.subscribe(() => undefined, {})).to.be.a('function');
    await tick();
    expect(fake.calls).to.have.length(2);
  });
});
