// The guards that keep nasty bodies and names from breaking the server: body depth (before and
// after parsing) and the Warning header's quoting.

import { expect } from 'chai';
import { ApiError } from '../../pkg/api/errors.js';
import { checkBodyDepth, MAX_BODY_DEPTH, textDepth } from '../../pkg/server/body.js';
import { quoteWarning } from '../../pkg/server/aggregated/index.js';

describe('nasty bodies', () => {
  it('textDepth counts bracket nesting and skips quoted strings', () => {
    expect(textDepth('{"a":[1,{"b":[]}]}')).to.equal(4);
    expect(textDepth('{"a":"[[[[[[[[[[{{{{"}')).to.equal(1);
    expect(textDepth(`{"a":"\\"[[["}`)).to.equal(1);
    expect(textDepth("spec: {a: '[[[[['}")).to.equal(1);
    expect(textDepth('['.repeat(500_000))).to.equal(500_000);
  });

  it('checkBodyDepth refuses one level past the limit with 400, without recursion', () => {
    const nest = (n: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v;
    };
    expect(() => checkBodyDepth(nest(MAX_BODY_DEPTH))).to.not.throw();
    const err = (() => {
      try {
        checkBodyDepth(nest(100_000));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).to.be.instanceOf(ApiError);
    expect(err).to.include({ code: 400, reason: 'BadRequest' });
    // Wide is fine: a flat array of a million numbers is one level.
    expect(() => checkBodyDepth({ a: Array.from({ length: 1_000_000 }, (_, i) => i) })).to.not.throw();
  });

  it('quoteWarning gives printable ASCII in Go quoting, whatever the text holds', () => {
    expect(quoteWarning('unknown field "x"')).to.equal('"unknown field \\"x\\""');
    expect(quoteWarning('a\r\nb\u0000')).to.equal('"a\\u000d\\u000ab\\u0000"');
    expect(quoteWarning('ü🙂\ud800\\')).to.equal('"\\u00fc\\U0001f642\\ufffd\\\\"');
    expect(quoteWarning('é\u2028x')).to.match(/^[\x20-\x7e]+$/);
  });
});
