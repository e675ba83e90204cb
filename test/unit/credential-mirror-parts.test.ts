// The credential mirror's parts alone: the mirror Secret's shape and how one is recognised
// (plugins/credential-mirror/mirror-secret.ts), and the filter that keeps values out of what it
// says (redaction.ts). The mirror at work is test/e2e/credential-mirror.test.ts.

import type { V1Secret } from '@kubernetes/client-node';
import { expect } from 'chai';
import { codeOf, desiredMirror, isMirror, repairedMirror, sameMirror } from '../../plugins/credential-mirror/mirror-secret.js';
import { describeFailure, redact } from '../../plugins/credential-mirror/redaction.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const source: V1Secret = { metadata: { name: 'agentplane-model', namespace: 'agentplane' }, data: { apiKey: b64('sk-secret-value') } };

describe('credential mirror: the mirror Secret', () => {
  const want = desiredMirror('agentplane-model', 'team-a', 'agentplane', source);

  it('is Opaque, labelled as this installation’s, with the source’s data', () => {
    expect(want.type).to.equal('Opaque');
    expect(want.metadata?.namespace).to.equal('team-a');
    expect(want.data).to.deep.equal(source.data);
    expect(isMirror(want, 'agentplane')).to.equal(true);
    expect(isMirror(want, 'other-install'), 'another installation’s').to.equal(false);
    expect(isMirror({ metadata: { name: 'agentplane-model' } }, 'agentplane'), 'a foreign Secret').to.equal(false);
  });

  it('is the same only with exactly the data and our labels, Opaque and mutable', () => {
    expect(sameMirror(want, want)).to.equal(true);
    expect(sameMirror({ ...want, data: { ...want.data, extra: b64('x') } }, want)).to.equal(false);
    expect(sameMirror({ ...want, immutable: true }, want)).to.equal(false);
    expect(sameMirror({ ...want, metadata: { ...want.metadata, labels: {} } }, want)).to.equal(false);
  });

  it('repaired keeps others’ labels and annotations', () => {
    const cur: V1Secret = { metadata: { name: 'agentplane-model', namespace: 'team-a', labels: { mine: 'yes' }, annotations: { note: 'kept' } }, data: {} };
    const fixed = repairedMirror(cur, want);
    expect(fixed.metadata?.labels).to.include({ mine: 'yes', ...want.metadata!.labels });
    expect(fixed.metadata?.annotations).to.deep.equal({ note: 'kept' });
    expect(fixed.data).to.deep.equal(want.data);
  });

  it('codeOf reads either error shape', () => {
    expect(codeOf({ code: 409 })).to.equal(409);
    expect(codeOf({ statusCode: 404 })).to.equal(404);
    expect(codeOf(new Error('x'))).to.equal(undefined);
  });
});

describe('credential mirror: redaction', () => {
  it('blanks a value in clear and in base64', () => {
    const text = redact(`saw sk-secret-value and ${b64('sk-secret-value')}`, source.data!);
    expect(text).to.not.include('sk-secret-value');
    expect(text).to.not.include(b64('sk-secret-value'));
  });

  it('says only the status line of a Kubernetes answer, never its body', () => {
    const err = { code: 422, body: JSON.stringify({ reason: 'Invalid', message: 'bad sk-secret-value', details: { causes: ['body text'] } }) };
    expect(describeFailure(err, source.data!)).to.equal('Kubernetes API answered 422 Invalid: bad [redacted]');
  });
});
