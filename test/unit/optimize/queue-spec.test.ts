import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import {
  barsHash,
  canonicalJson,
  configFromWire,
  configToWire,
  jobId,
  sweepId,
  type SweepSpec,
} from '../../../src/optimize/queue-spec.ts';
import { checkQueueUrl, queueUrlFrom, redactUrl } from '../../../src/optimize/queue-url.ts';
import { scrubSecrets } from '../../../src/engine/secrets.ts';

const scalar = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.string({ maxLength: 6 }),
);
const params = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), scalar, { maxKeys: 5 });

function reversedKeys(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).reverse());
}

const spec: SweepSpec = {
  name: 'k',
  config: configToWire(
    BacktestConfig.parse({ strategy: { name: 'sma-cross' }, data: { source: 'synthetic', seed: 1 } }),
  ),
  walkForward: null,
  barsHash: 'a'.repeat(64),
  strategyHash: null,
  jobs: [{ index: 0, params: { fast: 5 }, sample: 'all' }],
};

describe('a distributed sweep definition', () => {
  it('hashes parameters alike whatever the order of their keys, and apart when a value differs', () => {
    fc.assert(
      fc.property(params, fc.constantFrom('all', 'in', 'out'), (p, sample) => {
        expect(canonicalJson(reversedKeys(p))).toBe(canonicalJson(p));
        expect(jobId('0123456789abcdef', { params: reversedKeys(p), sample })).toBe(
          jobId('0123456789abcdef', { params: p, sample }),
        );
        const id = jobId('0123456789abcdef', { params: { ...p, extra: 1 }, sample });
        expect(id).not.toBe(jobId('0123456789abcdef', { params: { ...p, extra: 2 }, sample }));
        // BullMQ refuses ids with ':' and bare integers.
        expect(id).toMatch(/^0123456789abcdef-[0-9a-f]{16}-(all|in|out)$/);
      }),
    );
  });

  it('names a sweep by its content: the same definition the same id, any change another', () => {
    expect(sweepId(JSON.parse(JSON.stringify(spec)) as SweepSpec)).toBe(sweepId(spec));
    expect(sweepId({ ...spec, barsHash: 'b'.repeat(64) })).not.toBe(sweepId(spec));
    expect(sweepId({ ...spec, jobs: [{ index: 0, params: { fast: 6 }, sample: 'all' }] })).not.toBe(sweepId(spec));
    expect(sweepId(spec)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('carries the backtest config through JSON and back unchanged, times included', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }),
        // A range is at least a minute long: an empty one is refused as the reversed one is.
        fc.option(fc.integer({ min: 1, max: 1e6 }), { nil: undefined }),
        (start, span) => {
          const config = BacktestConfig.parse({
            strategy: { name: 'breakout', params: { lookback: 20 } },
            data: { source: 'synthetic', seed: 3, start: new Date(start) },
            ...(span === undefined ? {} : { from: new Date(start), to: new Date(start + span * 60_000) }),
            fills: { slippageTicks: 2 },
          });
          const wire = JSON.parse(JSON.stringify(configToWire(config))) as Record<string, unknown>;
          expect(configFromWire(wire)).toEqual(config);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('hashes bars by every column', () => {
    const bars = {
      time: new Float64Array([1, 2]),
      open: new Float64Array([3, 4]),
      high: new Float64Array([5, 6]),
      low: new Float64Array([1, 2]),
      close: new Float64Array([3, 5]),
      volume: new Float64Array([7, 8]),
    };
    const base = barsHash(bars);
    for (const column of Object.keys(bars) as (keyof typeof bars)[]) {
      const changed = { ...bars, [column]: Float64Array.from(bars[column], (v, k) => (k === 1 ? v + 0.25 : v)) };
      expect(barsHash(changed)).not.toBe(base);
    }
    expect(barsHash({ ...bars })).toBe(base);
  });

  it('takes redis:// and rediss:// URLs only, and never prints their password', () => {
    expect(checkQueueUrl('redis://127.0.0.1:6379/2')).toBe('redis://127.0.0.1:6379/2');
    expect(checkQueueUrl('rediss://:secret@cache.example:6380')).toBe('rediss://:secret@cache.example:6380');
    expect(() => checkQueueUrl('http://127.0.0.1:6379')).toThrow(/redis:\/\/ or rediss:\/\//);
    expect(() => checkQueueUrl('redis://127.0.0.1:6379/x')).toThrow(/database number/);
    expect(() => checkQueueUrl('redis://:hunter2@127.0.0.1:6379/x')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
    expect(redactUrl('redis://user:hunter2@host:6379/1')).toBe('redis://user:***@host:6379/1');
    // A password seen once is scrubbed from every error and log line after.
    checkQueueUrl('redis://:s3cret%2Fpw@host:6379');
    expect(scrubSecrets('AUTH s3cret/pw failed; url redis://:s3cret%2Fpw@host')).toBe(
      'AUTH [redacted] failed; url redis://:[redacted]@host',
    );
    expect(queueUrlFrom(undefined, { TICKLINE_QUEUE_URL: 'redis://h:1/0' })).toBe('redis://h:1/0');
    expect(queueUrlFrom('redis://flag:2', { TICKLINE_QUEUE_URL: 'redis://h:1/0' })).toBe('redis://flag:2');
    expect(queueUrlFrom(undefined, {})).toBeUndefined();
  });
});
