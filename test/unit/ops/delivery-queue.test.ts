/**
 * The notification queue as a property: whatever the arrivals and whatever each target answers (at once
 * or later, delivered, failed, refused for good, rate limited), the queue never holds more than its bound,
 * delivers in the order messages came, tries none more than its attempts, and settles every message once:
 * delivered, or dropped with a log line that names it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/engine/log.ts';
import { DeliveryQueue, type SendOutcome } from '../../../src/ops/notify/delivery-queue.ts';

interface Message {
  readonly id: number;
  /** The answer to each attempt (the last one repeats). */
  readonly answers: readonly SendOutcome[];
}

const answer: fc.Arbitrary<SendOutcome> = fc.oneof(
  fc.constant<SendOutcome>({ ok: true }),
  fc.constant<SendOutcome>({ ok: false, reason: 'HTTP 500' }),
  fc.constant<SendOutcome>({ ok: false, reason: 'HTTP 404', permanent: true }),
  fc.constant<SendOutcome>({ ok: false, reason: 'HTTP 429', retryAfterMs: 1 }),
);

const scenario = fc.record({
  bound: fc.integer({ min: 1, max: 5 }),
  attempts: fc.integer({ min: 1, max: 4 }),
  /** Messages arrive in bursts; between bursts the event loop turns this many times. */
  bursts: fc.array(
    fc.record({
      answers: fc.array(fc.array(answer, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
      turns: fc.nat(3),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  /** Whether a send answers at once or after a turn of the event loop. */
  slow: fc.boolean(),
});

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the notification queue (property)', () => {
  it('never more than its bound, order kept, every message delivered or dropped with a log line', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ bound, attempts, bursts, slow }) => {
        const lines: Array<{ msg: string; id: number; reason: string }> = [];
        const logger = createLogger({
          level: 'warn',
          destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
        });
        const tries = new Map<number, number>();
        const delivered: number[] = [];
        const dropped: number[] = [];
        const queue = new DeliveryQueue<Message>({
          name: 'property',
          bound,
          attempts,
          backoffMs: 0,
          logger,
          describe: (m) => ({ id: m.id }),
          send: async (m) => {
            const n = (tries.get(m.id) ?? 0) + 1;
            tries.set(m.id, n);
            if (slow) await turn();
            return m.answers[Math.min(n, m.answers.length) - 1]!;
          },
          onSettled: (m, outcome) => (outcome === 'delivered' ? delivered : dropped).push(m.id),
        });
        let id = 0;
        for (const burst of bursts) {
          for (const answers of burst.answers) {
            queue.push({ id: ++id, answers });
            expect(queue.size).toBeLessThanOrEqual(bound);
          }
          for (let k = 0; k < burst.turns; k++) await turn();
        }
        await queue.drain();

        const all = Array.from({ length: id }, (_, i) => i + 1);
        expect([...delivered, ...dropped].sort((a, b) => a - b)).toEqual(all);
        expect(delivered).toEqual([...delivered].sort((a, b) => a - b));
        for (const n of tries.values()) expect(n).toBeLessThanOrEqual(attempts);
        const droppedLines = lines.filter((l) => l.msg === 'notification dropped');
        expect(droppedLines.map((l) => l.id).sort((a, b) => a - b)).toEqual([...dropped].sort((a, b) => a - b));
        expect(droppedLines.every((l) => l.reason.length > 0)).toBe(true);
        expect(queue.delivered + queue.dropped).toBe(id);
      }),
      { numRuns: 150 },
    );
  });
});
