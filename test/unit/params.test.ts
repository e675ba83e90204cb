import { expect } from 'chai';

import { ApiError } from '../../pkg/api/errors.js';
import { intParam, namespaceOf, type Query } from '../../pkg/server/params.js';

function thrown(fn: () => unknown): ApiError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err, 'expected an ApiError to be thrown').to.be.instanceOf(ApiError);
  return err as ApiError;
}

describe('server params', () => {
  describe('namespaceOf', () => {
    it('defaults to "default" when absent or empty', () => {
      expect(namespaceOf({})).to.equal('default');
      expect(namespaceOf({ namespace: undefined })).to.equal('default');
      expect(namespaceOf({ namespace: '' })).to.equal('default');
    });

    it('returns a valid DNS label as given', () => {
      for (const ns of ['team-a', 'a', 'ns1', '1ns', 'x'.repeat(63)]) expect(namespaceOf({ namespace: ns })).to.equal(ns);
    });

    for (const bad of ['Team', 'team_a', '-team', 'team-', 'a.b', 'x'.repeat(64), ' team']) {
      it(`rejects ${JSON.stringify(bad.length > 12 ? `${bad.slice(0, 6)}…(${bad.length})` : bad)} as Invalid on field namespace`, () => {
        const err = thrown(() => namespaceOf({ namespace: bad }));
        expect(err.reason).to.equal('Invalid');
        expect(err.code).to.equal(400);
        expect(err.details.causes).to.have.length(1);
        expect(err.details.causes![0].field).to.equal('namespace');
        expect(err.details.causes![0].message).to.contain('DNS label');
      });
    }

    it('rejects a repeated namespace parameter as BadRequest', () => {
      const err = thrown(() => namespaceOf({ namespace: ['a', 'b'] }));
      expect(err.reason).to.equal('BadRequest');
      expect(err.code).to.equal(400);
      expect(err.message).to.contain('"namespace"');
      expect(err.message).to.contain('more than once');
    });
  });

  describe('intParam', () => {
    const limit = (q: Query) => intParam(q, 'limit', { min: 1, max: 200, default: 50 });

    it('returns the default when absent, undefined when there is no default', () => {
      expect(limit({})).to.equal(50);
      expect(intParam({}, 'before', { min: 1 })).to.equal(undefined);
    });

    it('parses integers within range, including the bounds', () => {
      expect(limit({ limit: '1' })).to.equal(1);
      expect(limit({ limit: '73' })).to.equal(73);
      expect(limit({ limit: '200' })).to.equal(200);
      expect(limit({ limit: '007' })).to.equal(7);
      expect(intParam({ before: '123456789' }, 'before', { min: 1 })).to.equal(123456789);
      expect(intParam({ n: '0' }, 'n', { min: 0 })).to.equal(0);
    });

    for (const raw of ['1.5', '-1', 'abc', '201', '0', '', ' 5', '5 ', '1e2', '0x10', '+3', '99999999999999999999']) {
      it(`rejects limit=${JSON.stringify(raw)} as Invalid naming the parameter and range`, () => {
        const err = thrown(() => limit({ limit: raw }));
        expect(err.reason).to.equal('Invalid');
        expect(err.code).to.equal(400);
        expect(err.details.causes).to.deep.equal([{ field: 'limit', message: 'must be an integer from 1 to 200' }]);
      });
    }

    it('describes an open range as "N or more"', () => {
      const err = thrown(() => intParam({ before: '0' }, 'before', { min: 1 }));
      expect(err.details.causes).to.deep.equal([{ field: 'before', message: 'must be an integer 1 or more' }]);
    });

    it('rejects a repeated parameter as BadRequest', () => {
      const err = thrown(() => limit({ limit: ['1', '2'] }));
      expect(err.reason).to.equal('BadRequest');
      expect(err.message).to.contain('"limit"');
    });
  });
});
