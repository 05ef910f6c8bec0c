/**
 * The black-box fault suite's world: a simulator on loopback running on the wall clock (so the bot,
 * which trusts its own clock against a configured gateway, and the simulator agree on time), a fault
 * proxy in front of it, `tickline paper|live` started as child processes through the proxy, positions
 * sampled straight from the simulator during the run, and an audit of the gateway afterwards through
 * the project's TradingClient (Order/search, Trade/search, Position/searchOpen, Account/search) against
 * the bot's journal and its final snapshot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { stringify } from 'yaml';
import { TradeSide } from '../../../src/protocol/codes.ts';
import type * as S from '../../../src/protocol/schemas.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { Journal, type JournaledFill, type JournaledOrder } from '../../../src/adapters/live/journal.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { ADMIN_PREFIX, startSimulator, type SimHandle } from '../../../src/sim/index.ts';
import { startHubProxy, type HubProxy } from './hub-proxy.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';

export const REPO = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(REPO, 'bin/tickline.js');
const STRATEGY = path.join(import.meta.dirname, 'fixtures/flip-strategy.ts');

/** ES's front month today: the simulator runs on the wall clock, where older months have expired. */
export const CONTRACT = CALENDAR.contract('ES', CALENDAR.frontMonth('ES', Date.now())).id;
/** Bars of two seconds: the shortest the retrieveBars budget allows (16 per 30 s with its reserve). */
export const BAR_MS = 2_000;
/** The flip strategy's size: its largest target, in absolute value. */
export const MAX_TARGET = 1;
/** `gateway.timeoutMs` of every bot, as in the reproduction. */
export const REQUEST_TIMEOUT_MS = 1_500;
/** Within the default budget (117 of the 120 reads a minute the plan allows besides its reserve). */
export const POLL = {
  openOrdersMs: 2_000,
  ordersMs: 3_000,
  tradesMs: 2_000,
  positionsMs: 2_000,
  accountMs: 30_000,
  closeDelayMs: 300,
};
const UNLIMITED = {
  bars: { requests: 1_000_000, windowMs: 30_000 },
  default: { requests: 1_000_000, windowMs: 60_000 },
};

export type Mode = 'paper' | 'live';

export interface BotConfig {
  readonly mode?: Mode;
  /** `session.maxBars`: the bot ends by itself after this many closed bars. */
  readonly bars: number;
  /** `execution` keys (unknownOutcomeMs, ...); absent: the defaults. */
  readonly execution?: Record<string, unknown>;
  /** Another way to the simulator (a second proxy); default this world's proxy. */
  readonly gatewayUrl?: string;
  /** Trade on the realtime hubs too, through this world's hub proxy (`gateway.realtimeUrl`). */
  readonly realtime?: boolean;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A `tickline paper|live` child process, its output kept whole. */
export class BotProcess {
  stdout = '';
  stderr = '';
  exit: Exit | undefined;
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;

  constructor(
    readonly label: string,
    args: string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
  ) {
    this.child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** Resolves once `check` holds; rejects when the process ends first or the deadline passes. */
  async until(check: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (check()) return;
      if (!this.running)
        throw new Error(
          `${this.label} exited (${JSON.stringify(this.exit)}) before ${what}; stderr: ${tail(this.stderr)}`,
        );
      if (Date.now() > deadline)
        throw new Error(`${this.label}: timed out after ${ms} ms waiting for ${what}; stderr: ${tail(this.stderr)}`);
      await sleep(20);
    }
  }

  /** The session has logged in, reconciled and printed its first line (a node: every account's). */
  started(ms = 90_000, accounts = 1): Promise<void> {
    return this.until(
      () => (this.stdout.match(/session on account|reconciled: /g) ?? []).length >= accounts,
      ms,
      'the session to start',
    );
  }

  /** Wait for the exit; past the deadline, interrupt it (and kill it if that does not help). */
  async finish(ms: number): Promise<Exit> {
    const timer = setTimeout(() => {
      this.kill('SIGINT');
      setTimeout(() => this.kill('SIGKILL'), 15_000).unref();
    }, ms);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Positions straight from the simulator, a few times a second: what an outside observer saw. */
class PositionSampler {
  readonly samples: Array<{ time: number; size: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly truth: TradingClient,
    private readonly accountIds: readonly number[],
  ) {}

  start(everyMs = 200): void {
    this.timer = setInterval(() => void this.sample(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get maxAbs(): number {
    return this.samples.reduce((m, s) => Math.max(m, Math.abs(s.size)), 0);
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (const accountId of this.accountIds) {
        const positions = await this.truth.searchOpenPositions(accountId);
        const size = positions.filter((p) => p.contractId === CONTRACT).reduce((a, p) => a + signedSize(p), 0);
        this.samples.push({ time: Date.now(), size });
      }
    } catch {
      // A missed sample only makes the sampled maximum less complete; the trade path is the exact one.
    } finally {
      this.busy = false;
    }
  }
}

/** An excursion of the gateway's position beyond the strategy's largest target. */
export interface Excess {
  readonly from: number;
  /** When the position came back within the target (the audit's time when it never did). */
  readonly to: number;
  readonly peak: number;
  readonly closed: boolean;
}

/** The gateway's position trade by trade (in the order the gateway executed them). */
export interface PositionPath {
  readonly maxAbs: number;
  readonly excesses: readonly Excess[];
  readonly final: number;
}

export function positionPath(trades: readonly S.Trade[], limit: number, end: number): PositionPath {
  let position = 0;
  let maxAbs = 0;
  const excesses: Excess[] = [];
  let open: { from: number; peak: number } | undefined;
  for (const t of [...trades].filter((x) => !x.voided && x.contractId === CONTRACT).sort((a, b) => a.id - b.id)) {
    position += t.side === TradeSide.Buy ? t.size : -t.size;
    maxAbs = Math.max(maxAbs, Math.abs(position));
    const time = Date.parse(t.creationTimestamp);
    if (Math.abs(position) > limit) {
      open ??= { from: time, peak: 0 };
      open.peak = Math.max(open.peak, Math.abs(position));
    } else if (open) {
      excesses.push({ from: open.from, to: time, peak: open.peak, closed: true });
      open = undefined;
    }
  }
  if (open) excesses.push({ from: open.from, to: end, peak: open.peak, closed: false });
  return { maxAbs, excesses, final: position };
}

export interface JournalView {
  readonly exists: boolean;
  readonly orders: JournaledOrder[];
  readonly fills: JournaledFill[];
  readonly positions: Record<string, number>;
  readonly anomalies: string[];
  /** The engine's last snapshot (`session/after`), when the last session ended cleanly. */
  readonly finalSnapshot: { balance: number; positions: Array<{ contractId: string; size: number }> } | undefined;
  /** Tags every start-up reconciliation reported as ours but unknown to the journal. */
  readonly unjournaledTags: string[];
}

export function readJournal(file: string): JournalView {
  if (!existsSync(file))
    return {
      exists: false,
      orders: [],
      fills: [],
      positions: {},
      anomalies: [],
      finalSnapshot: undefined,
      unjournaledTags: [],
    };
  const journal = Journal.open(file, { lock: false });
  try {
    const entries = journal.entries();
    const sessionAfter = entries.filter((e) => e.kind === 'session' && e.phase === 'after').at(-1);
    const lastBefore = entries.filter((e) => e.kind === 'session' && e.phase === 'before').at(-1);
    const ended = sessionAfter !== undefined && lastBefore !== undefined && sessionAfter.seq > lastBefore.seq;
    const snapshot = ended
      ? (
          sessionAfter.payload as {
            snapshot?: { balance: number; positions: Array<{ contractId: string; size: number }> };
          }
        ).snapshot
      : undefined;
    return {
      exists: true,
      orders: journal.orders(),
      fills: journal.fills(),
      positions: Object.fromEntries(journal.positionsFromFills()),
      anomalies: entries
        .filter((e) => e.kind === 'anomaly')
        .map((e) => `${e.tag ?? '-'}: ${(e.payload as { message?: string }).message ?? JSON.stringify(e.payload)}`),
      finalSnapshot: snapshot,
      unjournaledTags: entries
        .filter((e) => e.kind === 'reconcile' && e.phase === 'after')
        .flatMap((e) => (e.payload as { unjournaledTags?: string[] }).unjournaledTags ?? []),
    };
  } finally {
    journal.close();
  }
}

/** Looks into a journal a running bot holds, read-only, without taking its lock or creating it. */
export function peekJournal<T>(file: string, read: (db: Database.Database) => T): T | undefined {
  if (!existsSync(file)) return undefined;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    return read(db);
  } catch {
    // Not created yet, or its schema not yet written: nothing to see.
    return undefined;
  } finally {
    db?.close();
  }
}

export interface Audit {
  readonly time: number;
  readonly orders: S.Order[];
  readonly trades: S.Trade[];
  readonly positions: Record<string, number>;
  readonly balance: number;
  readonly journal: JournalView;
  readonly path: PositionPath;
  readonly sampledMax: number;
  readonly placesForwarded: Map<string, number>;
  readonly faultsInjected: number;
}

export class FaultWorld {
  readonly bots: BotProcess[] = [];
  readonly extraProxies: FaultProxy[] = [];
  private readonly sampler: PositionSampler;

  private constructor(
    readonly name: string,
    readonly dir: string,
    readonly sim: SimHandle,
    readonly proxy: FaultProxy,
    readonly truth: TradingClient,
    readonly account: Record<Mode, { id: number; name: string }>,
    readonly credentials: { userName: string; apiKey: string; adminKey: string },
    readonly mode: Mode,
    readonly hubProxy: HubProxy,
    /** The trading node's second account (paper). */
    readonly second: { id: number; name: string },
  ) {
    this.sampler = new PositionSampler(truth, [account[mode].id, second.id]);
    this.sampler.start();
  }

  static async start(name: string, mode: Mode = 'paper'): Promise<FaultWorld> {
    const dir = mkdtempSync(path.join(os.tmpdir(), `tickline-fault-${name.replace(/[^a-z0-9]+/gi, '-')}-`));
    const apiKey = randomBytes(24).toString('base64url');
    const adminKey = randomBytes(24).toString('hex');
    const userName = 'fault-trader';
    const sim = await startSimulator({
      clock: 'realtime',
      // The bot runs on the wall clock: a market that never closes keeps the suite independent of the hour it runs at.
      marketHours: 'always',
      historyDays: 1,
      rateLimits: UNLIMITED,
      adminKey,
      users: [
        {
          userName,
          apiKey,
          accounts: [
            { name: 'FAULT-PAPER', template: 'PRACTICE' },
            // The trading node's second account (its case runs a bot on each).
            { name: 'FAULT-PAPER-2', template: 'PRACTICE' },
            { name: 'FAULT-LIVE', template: 'PRACTICE', live: true },
          ],
        },
      ],
    });
    const proxy = await startFaultProxy(sim.tradingUrl);
    const hubProxy = await startHubProxy(sim.realtimeUrl);
    const truth = new TradingClient({ baseUrl: sim.tradingUrl, userName, apiKey, logger: silentLogger });
    const accounts = await truth.searchAccounts(true);
    const id = (n: string): number => accounts.find((a) => a.name === n)!.id;
    return new FaultWorld(
      name,
      dir,
      sim,
      proxy,
      truth,
      { paper: { id: id('FAULT-PAPER'), name: 'FAULT-PAPER' }, live: { id: id('FAULT-LIVE'), name: 'FAULT-LIVE' } },
      { userName, apiKey, adminKey },
      mode,
      hubProxy,
      { id: id('FAULT-PAPER-2'), name: 'FAULT-PAPER-2' },
    );
  }

  /** The second account's journal in a node case. */
  get secondJournalFile(): string {
    return path.join(this.dir, 'journal-2.sqlite');
  }

  /**
   * A trading node's config: the flip strategy on the paper account (this world's journal) and again, under
   * its own bot id, on the second account; the polls slowed so both accounts fit the user's one budget.
   */
  nodeConfig(c: BotConfig): string {
    const url = c.gatewayUrl ?? this.proxy.url;
    const bot = (id: string, account: string) => ({
      id,
      strategy: STRATEGY,
      params: { size: MAX_TARGET },
      contracts: [CONTRACT],
      timeframe: { unit: 'second', unitNumber: BAR_MS / 1000 },
      accounts: [account],
    });
    const config = {
      mode: 'paper',
      journals: this.dir,
      accounts: [
        { name: this.account.paper.name, journal: this.journalFile },
        { name: this.second.name, journal: this.secondJournalFile },
      ],
      bots: [bot('flip', this.account.paper.name), bot('flop', this.second.name)],
      gateway: { url, adminUrl: `${url}${ADMIN_PREFIX}`, timeoutMs: REQUEST_TIMEOUT_MS },
      poll: { ...POLL, openOrdersMs: 5_000, tradesMs: 5_000, positionsMs: 5_000, ordersMs: 6_000 },
      session: { maxBars: c.bars },
      market: { hours: 'none' },
      log: { level: 'info' },
      ...(c.execution === undefined ? {} : { execution: c.execution }),
    };
    const file = path.join(this.dir, `node-${this.bots.length + 1}.yaml`);
    writeFileSync(file, stringify(config));
    return file;
  }

  get journalFile(): string {
    return path.join(this.dir, 'journal.sqlite');
  }

  get accountId(): number {
    return this.account[this.mode].id;
  }

  /** Writes a config file for one run of the bot and returns its path. */
  config(c: BotConfig): string {
    const mode = c.mode ?? this.mode;
    const url = c.gatewayUrl ?? this.proxy.url;
    const config = {
      strategy: { name: STRATEGY, id: 'flip', params: { size: MAX_TARGET } },
      contracts: [CONTRACT],
      timeframe: { unit: 'second', unitNumber: BAR_MS / 1000 },
      account: { name: this.account[mode].name },
      gateway: {
        url,
        adminUrl: `${url}${ADMIN_PREFIX}`,
        timeoutMs: REQUEST_TIMEOUT_MS,
        ...(c.realtime === true ? { realtimeUrl: this.hubProxy.url } : {}),
      },
      journal: this.journalFile,
      poll: POLL,
      session: { maxBars: c.bars },
      // The simulator's market never closes (the bot runs on the wall clock): the session's hours agree.
      market: { hours: 'none' },
      log: { level: 'info' },
      ...(c.execution === undefined ? {} : { execution: c.execution }),
    };
    const file = path.join(this.dir, `run-${this.bots.length + 1}.yaml`);
    writeFileSync(file, stringify(config));
    return file;
  }

  spawn(configFile: string, mode: Mode = this.mode): BotProcess {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TICKLINE_USERNAME: this.credentials.userName,
      TICKLINE_API_KEY: this.credentials.apiKey,
      TICKLINE_ADMIN_AUTH: `Bearer ${this.credentials.adminKey}`,
    };
    delete env.TICKLINE_LOG_LEVEL;
    const node = path.basename(configFile).startsWith('node-');
    const args = node
      ? ['run', '--config', configFile]
      : [mode, '--config', configFile, ...(mode === 'live' ? ['--confirm-live'] : [])];
    const bot = new BotProcess(`${this.name} bot ${this.bots.length + 1}`, args, this.dir, env);
    this.bots.push(bot);
    return bot;
  }

  async extraProxy(): Promise<FaultProxy> {
    const proxy = await startFaultProxy(this.sim.tradingUrl);
    this.extraProxies.push(proxy);
    return proxy;
  }

  /** Place requests the proxy has answered (of any status). */
  placesAnswered(): number {
    return this.proxy.requests.filter((r) => r.path === '/api/Order/place' && r.answeredStatus !== undefined).length;
  }

  /** The gateway, the journal and what was sampled, once every bot has ended. */
  async audit(of: { accountId: number; journalFile: string } = this): Promise<Audit> {
    this.sampler.stop();
    const { accountId, journalFile } = of;
    const time = Date.now();
    const from = new Date(time - 3_600_000).toISOString();
    const orders = await this.truth.searchOrders({ accountId, startTimestamp: from });
    const trades = await this.truth.searchTrades({ accountId, startTimestamp: from });
    const open = await this.truth.searchOpenPositions(accountId);
    const account = (await this.truth.searchAccounts(true)).find((a) => a.id === accountId)!;
    return {
      time,
      orders,
      trades,
      positions: Object.fromEntries(open.map((p) => [p.contractId, signedSize(p)] as const).filter(([, s]) => s !== 0)),
      balance: account.balance,
      journal: readJournal(journalFile),
      path: positionPath(trades, MAX_TARGET, time),
      sampledMax: this.sampler.maxAbs,
      placesForwarded: this.proxy.placesByTag(accountId),
      faultsInjected: [this.proxy, ...this.extraProxies].flatMap((p) => p.requests).filter((r) => r.fault !== undefined)
        .length,
    };
  }

  /** Everything the bots wrote: standard output and error of each run, and every file they left. */
  outputs(): Array<{ where: string; text: string }> {
    const out: Array<{ where: string; text: string }> = [];
    for (const bot of this.bots) {
      out.push({ where: `${bot.label} stdout`, text: bot.stdout }, { where: `${bot.label} stderr`, text: bot.stderr });
    }
    if (existsSync(this.dir)) {
      for (const file of readdirSync(this.dir))
        out.push({ where: file, text: readFileSync(path.join(this.dir, file)).toString('latin1') });
    }
    return out;
  }

  /** The credentials a bot of this world could leak: API key, administration credential, every session token issued. */
  secrets(): string[] {
    const tokens = [this.proxy, ...this.extraProxies].flatMap((p) => p.tokens());
    return [this.credentials.apiKey, this.credentials.adminKey, ...tokens];
  }

  /** Stops everything; with `keep` the folder stays, with each bot's output in it, for a look after a failure. */
  async close(options: { keep?: boolean } = {}): Promise<void> {
    this.sampler.stop();
    for (const bot of this.bots) bot.kill('SIGKILL');
    await Promise.all(this.bots.map((b) => b.exited));
    await this.truth.close();
    for (const p of [this.proxy, ...this.extraProxies]) await p.close();
    await this.hubProxy.close();
    await this.sim.close();
    if (!options.keep) {
      rmSync(this.dir, { recursive: true, force: true });
      return;
    }
    this.bots.forEach((bot, i) => {
      writeFileSync(path.join(this.dir, `bot-${i + 1}.stdout`), bot.stdout);
      writeFileSync(path.join(this.dir, `bot-${i + 1}.stderr`), bot.stderr);
    });
    writeFileSync(path.join(this.dir, 'proxy-requests.json'), JSON.stringify(this.proxy.requests, null, 1));
  }
}

export function tail(text: string, lines = 6): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
