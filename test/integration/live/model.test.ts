/**
 * Model-based test of the executor against the simulator: fast-check drives random interleavings of
 * places, cancels, faults on any endpoint (the connection dropped before or after the simulator acted,
 * a 500), clock moves with polls, and restarts on the same journal. The model is only the set of tags
 * the strategy asked for; whatever happened, after the faults stop the journal and the simulator agree
 * and no customTag ever reached the simulator twice.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/engine/log.ts';
import { reconcileOnStart } from '../../../src/adapters/live/reconcile.ts';
import { agreement, lastTicks, limit, market, startBench, startBot, type Bench, type Bot } from './live-harness.ts';

interface Model {
  tags: string[];
}
interface Real {
  b: Bench;
  bot: Bot;
}
type Cmd = fc.AsyncCommand<Model, Real>;

const noDuplicate = (r: Real): void => {
  for (const [tag, count] of r.b.proxy.placesByTag()) expect(count, `places of ${tag}`).toBe(1);
};

class Place implements Cmd {
  constructor(
    readonly side: 'buy' | 'sell',
    readonly resting: boolean,
  ) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const tag = `m-${m.tags.length + 1}`;
    m.tags.push(tag);
    const px = this.resting ? await lastTicks(r.b) : 0;
    r.bot.executor.place(
      this.resting ? limit(tag, this.side, this.side === 'buy' ? px - 40 : px + 40) : market(tag, this.side),
    );
    await r.bot.executor.idle();
    noDuplicate(r);
  }
  toString = (): string => `place ${this.side} ${this.resting ? 'resting limit' : 'market'}`;
}

class Cancel implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Model): boolean => m.tags.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    r.bot.executor.cancel(m.tags[this.pick % m.tags.length]!);
    await r.bot.executor.idle();
    noDuplicate(r);
  }
  toString = (): string => `cancel #${this.pick}`;
}

class Fault implements Cmd {
  constructor(
    readonly path: string,
    readonly kind: 'drop-before' | 'drop-after' | 'status',
  ) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    r.b.proxy.inject({
      path: this.path,
      action: this.kind === 'status' ? { kind: 'status', status: 500 } : { kind: this.kind },
    });
  }
  toString = (): string => `fault ${this.kind} on ${this.path}`;
}

class Poll implements Cmd {
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    r.b.sim.clock.advance(5_000);
    await r.bot.poller.tick();
    await r.bot.executor.idle();
    noDuplicate(r);
  }
  toString = (): string => 'advance 5 s and poll';
}

class Restart implements Cmd {
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    await r.bot.stop();
    r.bot = startBot(r.b);
    const report = await reconcileOnStart({
      client: r.b.client,
      journal: r.bot.journal,
      executor: r.bot.executor,
      accountId: r.b.sim.demo.accountId,
      strategyIds: ['m'],
      now: r.b.now,
      logger: silentLogger,
    }).catch(() => undefined);
    if (report) expect(report.sequenceStart.m).toBeGreaterThan(m.tags.length);
    await r.bot.executor.idle();
    noDuplicate(r);
  }
  toString = (): string => 'restart on the same journal';
}

/**
 * The in-process kill -9: a place is sent (and forwarded to the simulator or not), the process "dies"
 * before the answer (its journal is closed under it, so nothing more is written), and a fresh executor
 * starts on the same journal file.
 */
class PlaceAndCrash implements Cmd {
  constructor(readonly forwarded: boolean) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const tag = `m-${m.tags.length + 1}`;
    m.tags.push(tag);
    // Pending faults would take the place's turn at the proxy; this command is about the crash alone.
    r.b.proxy.clear();
    r.b.proxy.inject({ path: '/api/Order/place', action: { kind: 'hold', forward: this.forwarded } });
    r.bot.executor.place(market(tag, 'buy'));
    await Promise.race([
      r.b.proxy.held(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`place ${tag} never reached the proxy`)), 3_000)),
    ]);
    r.bot.poller.stop();
    r.bot.journal.close();
    r.b.proxy.release({ drop: true });
    await r.bot.executor.idle();
    r.bot = startBot(r.b);
    const report = await reconcileOnStart({
      client: r.b.client,
      journal: r.bot.journal,
      executor: r.bot.executor,
      accountId: r.b.sim.demo.accountId,
      strategyIds: ['m'],
      now: r.b.now,
      logger: silentLogger,
    }).catch(() => undefined);
    if (report) {
      expect(report.resolved.map((x) => x.tag)).toContain(tag);
      expect(report.sequenceStart.m).toBeGreaterThan(m.tags.length);
    }
    await r.bot.executor.idle();
    noDuplicate(r);
  }
  toString = (): string =>
    `place, then die before the answer (${this.forwarded ? 'order reached the simulator' : 'order never arrived'})`;
}

const paths = [
  '/api/Order/place',
  '/api/Order/cancel',
  '/api/Order/search',
  '/api/Order/searchOpen',
  '/api/Trade/search',
  '/api/Position/searchOpen',
];
const commands = [
  fc
    .tuple(fc.constantFrom<'buy' | 'sell'>('buy', 'sell'), fc.boolean())
    .map(([side, resting]) => new Place(side, resting)),
  fc.nat(20).map((n) => new Cancel(n)),
  fc
    .tuple(
      fc.constantFrom(...paths),
      fc.constantFrom<'drop-before' | 'drop-after' | 'status'>('drop-before', 'drop-after', 'status'),
    )
    .map(([p, k]) => new Fault(p, k)),
  fc.constant(new Poll()),
  fc.constant(new Restart()),
  fc.boolean().map((forwarded) => new PlaceAndCrash(forwarded)),
];

describe('executor against the simulator under random faults', () => {
  it('never duplicates an order and always ends in agreement with the simulator', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 20, size: '+1' }), async (cmds) => {
        const b = await startBench({ timeoutMs: 300 });
        const real: Real = { b, bot: startBot(b) };
        try {
          await fc.asyncModelRun(() => ({ model: { tags: [] }, real }), cmds);
          b.proxy.clear();
          await real.bot.executor.idle();
          // Past the unknown-outcome window every place is resolved: found, or taken as lost.
          b.sim.clock.advance(61_000);
          await agreement(b, real.bot);
        } finally {
          await real.bot.stop();
          await b.close();
        }
      }),
      { numRuns: 15 },
    );
  }, 60_000);
});
