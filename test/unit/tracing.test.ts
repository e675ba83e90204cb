// pkg/observability/tracing.ts: what the OTEL_* variables turn on, and what workers get of them.

import { expect } from 'chai';
import { otelEnv, samplerFromEnv, tracingEnabled } from '../../pkg/observability/tracing.js';

describe('tracing settings (OTEL_*)', () => {
  it('is on with an OTLP endpoint only, and off when disabled', () => {
    expect(tracingEnabled({})).to.equal(false);
    expect(tracingEnabled({ OTEL_TRACES_SAMPLER: 'always_on' })).to.equal(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).to.equal(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).to.equal(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_SDK_DISABLED: 'true' })).to.equal(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_EXPORTER: 'none' })).to.equal(false);
  });

  it('reads the sampler as the specification names them, and refuses an unknown one', () => {
    expect(samplerFromEnv({}).toString()).to.match(/ParentBased/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).to.match(/AlwaysOff/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).to.match(/TraceIdRatioBased\{0\.25\}/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }).toString()).to.match(/0\.5/);
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).to.throw(/not one agentplane supports/);
  });

  it('hands workers the OTEL_* settings, and pods none of the headers', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer x', PATH: '/bin', ANTHROPIC_API_KEY: 'k' };
    expect(otelEnv(env)).to.deep.equal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer x' });
    expect(otelEnv(env, { headers: false })).to.deep.equal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' });
  });
});
