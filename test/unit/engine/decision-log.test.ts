import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DecisionLog } from '../../../src/engine/decision-log.ts';
import { target } from '../../../src/engine/intents.ts';
import { Multicast } from '../../../src/engine/multicast.ts';
import type { GuardResult } from '../../../src/engine/risk.ts';

/** A pino logger at `level` whose lines are kept, parsed. */
function keptLogger(level: string): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

const REFUSED: GuardResult = { accepted: false, code: 'MARKET_CLOSED', message: 'the market of ESZ5 is closed' };

describe('the decision log', () => {
  it("writes a rejection's line, with the intent as it was when decided, to a logger that writes warnings", async () => {
    const { logger, lines } = keptLogger('info');
    const log = new DecisionLog(new Multicast(), logger);
    const intent = target(2);
    log.decide('s', intent, undefined, REFUSED, 0);
    (intent as { size: number }).size = 5;
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ strategyId: 's', code: 'MARKET_CLOSED', intent: { kind: 'target', size: 2 } });
    expect(lines[0]!.msg).toBe('risk guard rejected: the market of ESZ5 is closed');
  });

  it('counts rejections without reading the intent for a logger that writes no warnings (a backtest refused at every closed bar)', () => {
    const { logger, lines } = keptLogger('error');
    const log = new DecisionLog(new Multicast(), logger);
    // An intent that fails when read: nothing may read it for a line nobody writes.
    const unreadable = new Proxy(target(1), {
      ownKeys: () => {
        throw new Error('read for a silent logger');
      },
    });
    for (let k = 0; k < 3; k++) log.decide('s', unreadable, undefined, REFUSED, k);
    log.decide(
      's',
      unreadable,
      undefined,
      { accepted: true, size: 1, adjusted: 'MAX_POSITION_SIZE', message: 'reduced' },
      3,
    );
    expect(log.rejectionCounts()).toEqual({ MARKET_CLOSED: 3 });
    expect(lines).toEqual([]);
  });
});
