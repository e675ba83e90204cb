import { expect } from 'chai';
import { burstFor, TokenBuckets } from '../../pkg/server/rate-limit.js';

describe('TokenBuckets', () => {
  it('grants the burst, then refuses with the seconds until a token is back, then refills at the rate', () => {
    let now = 1_000_000;
    const b = new TokenBuckets(0.5, 2, () => now);
    expect([b.take('u'), b.take('u')]).to.deep.equal([0, 0]);
    expect(b.take('u')).to.equal(2); // one token takes 2 s at 0.5/s
    now += 1000;
    expect(b.take('u')).to.equal(1);
    now += 1000;
    expect(b.take('u')).to.equal(0);
    expect(b.take('other')).to.equal(0);
  });

  it('never refills past the burst and forgets full buckets', () => {
    let now = 0;
    const b = new TokenBuckets(10, 3, () => now);
    b.take('a');
    now += 3_600_000;
    expect([b.take('b'), b.size]).to.deep.equal([0, 1]); // the sweep dropped a's full bucket
    expect([b.take('b'), b.take('b'), b.take('b')]).to.deep.equal([0, 0, 1]);
  });

  it('defaults the burst to two seconds of the rate, at least 1', () => {
    expect([burstFor(100), burstFor(0.2)]).to.deep.equal([200, 1]);
  });
});
