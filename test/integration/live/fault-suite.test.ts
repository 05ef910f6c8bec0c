/**
 * The black-box fault suite of issue 12: `tickline paper|live` as a child process, the simulator on
 * loopback, a fault proxy between them, the flip strategy, and an audit of the gateway after each case
 * (see fault-cases.ts for the cases and the invariants).
 *
 * The cases run concurrently in the background (`TICKLINE_FAULT_CONCURRENCY`, default 5: they mostly
 * wait on the wall clock) and each test awaits its own; the run length per bot is
 * `TICKLINE_FAULT_BARS` bars of two seconds (default 10). `TICKLINE_FAULT_REPORT=<file>` writes the
 * numbers of every case there (markdown for a `.md` file, JSON otherwise), for docs/live.md;
 * `TICKLINE_FAULT_KEEP=1` keeps each case's folder (journal, configs, bot output, requests seen), and
 * `TICKLINE_FAULT_CASES=<regexp>` runs only the cases whose names match.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BARS, CASES, invariantViolations, numbersOf, type CaseNumbers, type FaultCase } from './fault-cases.ts';
import { FaultWorld } from './fault-world.ts';
import { ensureDist } from '../built-cli.ts';

const CONCURRENCY = Math.max(1, Number(process.env.TICKLINE_FAULT_CONCURRENCY ?? 5));
const REPORT = process.env.TICKLINE_FAULT_REPORT;
/** Only the cases whose name matches this regular expression (while working on one); default all. */
const ONLY =
  process.env.TICKLINE_FAULT_CASES === undefined ? undefined : new RegExp(process.env.TICKLINE_FAULT_CASES, 'i');
const SELECTED = CASES.filter((c) => ONLY === undefined || ONLY.test(c.name));
/** Keep each case's folder (journal, config, bot output, proxy log) in the temporary directory. */
const KEEP = process.env.TICKLINE_FAULT_KEEP === '1';

interface CaseResult {
  readonly name: string;
  readonly violations: string[];
  /** Where a secret was found in the case's outputs. */
  readonly leaks: string[];
  readonly numbers?: CaseNumbers;
}

/** Runs `work` with at most `limit` at a time. */
function limiter(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: Array<() => void> = [];
  return async (work) => {
    if (active >= limit) await new Promise<void>((resolve) => queue.push(resolve));
    active++;
    try {
      return await work();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

function leaksIn(world: FaultWorld): string[] {
  const secrets = world.secrets();
  const leaks: string[] = [];
  if (world.proxy.tokens().length === 0)
    leaks.push(`${world.name}: no session token was issued through the proxy, so the scan for tokens proves nothing`);
  for (const { where, text } of world.outputs()) {
    for (const secret of secrets) {
      if (text.includes(secret))
        leaks.push(
          `${world.name}: ${where} holds ${secret === world.credentials.apiKey ? 'the API key' : secret === world.credentials.adminKey ? 'the admin credential' : 'a session token'}`,
        );
    }
  }
  return leaks;
}

async function execute(c: FaultCase): Promise<CaseResult> {
  const started = Date.now();
  const world = await FaultWorld.start(c.name, c.mode);
  try {
    let outcome;
    try {
      outcome = await c.run(world);
    } catch (error) {
      outcome = {
        violations: [`case did not complete: ${error instanceof Error ? error.message : String(error)}`],
        sessionExpected: true,
      };
    }
    world.proxy.release({ drop: true });
    world.proxy.clear();
    for (const bot of world.bots) bot.kill('SIGKILL');
    await Promise.all(world.bots.map((b) => b.exited));
    const audit = await world.audit();
    const lastStdout = world.bots.filter((b) => b.stdout !== '').at(-1)?.stdout ?? '';
    const violations = [...outcome.violations, ...invariantViolations(audit, c, outcome, lastStdout, outcome.account)];
    return {
      name: c.name,
      violations,
      leaks: leaksIn(world),
      numbers: numbersOf(c, audit, violations.length, Date.now() - started),
    };
  } catch (error) {
    return {
      name: c.name,
      violations: [`audit failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`],
      leaks: leaksIn(world),
    };
  } finally {
    await world.close({ keep: KEEP });
    if (KEEP) process.stderr.write(`${c.name}: kept ${world.dir}\n`);
  }
}

const results = new Map<string, Promise<CaseResult>>();

function report(numbers: readonly CaseNumbers[]): string {
  if (!REPORT?.endsWith('.md')) return `${JSON.stringify({ bars: BARS, cases: numbers }, null, 2)}\n`;
  const head =
    '| case | fault | max \\|position\\| | longest beyond target | anomalies | duplicates | unjournaled orders | lost fills | orders | faults injected | violations |';
  const rows = numbers.map(
    (n) =>
      `| ${n.case} | ${n.fault} | ${n.maxAbsPosition} | ${n.longestExcessMs} ms | ${n.anomalies} | ${n.duplicates} | ${n.unjournaledOrders} | ${n.lostFills} | ${n.orders} | ${n.faultsInjected} | ${n.violations} |`,
  );
  return [
    `Fault suite, ${BARS} bars of 2 s per run, strategy target ±1.`,
    '',
    head,
    `|${'---|'.repeat(11)}`,
    ...rows,
    '',
  ].join('\n');
}

beforeAll(ensureDist, 240_000);

describe('live trading under network faults (child processes, simulator, fault proxy)', () => {
  beforeAll(() => {
    const run = limiter(CONCURRENCY);
    for (const c of SELECTED)
      results.set(
        c.name,
        run(() => execute(c)),
      );
  });

  afterAll(async () => {
    const all = await Promise.all(results.values());
    if (REPORT) writeFileSync(REPORT, report(all.flatMap((r) => (r.numbers ? [r.numbers] : []))));
  });

  const timeout = (BARS * 2_000 + 240_000) * Math.ceil(SELECTED.length / CONCURRENCY);
  for (const c of CASES) {
    it.skipIf(!SELECTED.includes(c))(
      `${c.name}: no duplicate, nothing unjournaled, no lost fill, position within the target, all agree`,
      async () => {
        const result = await results.get(c.name)!;
        expect(result.violations, `${c.name} (${c.fault})`).toEqual([]);
      },
      timeout,
    );
  }

  it(
    'no output of any case (standard output, standard error, files) holds the API key, the admin credential or a session token',
    async () => {
      const all = await Promise.all(results.values());
      expect(all.flatMap((r) => r.leaks)).toEqual([]);
    },
    timeout,
  );
});
