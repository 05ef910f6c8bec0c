/**
 * Notifications over real loopback sockets and real child processes: a journal (a real SQLite file) is
 * written, and a local HTTP receiver gets what a Discord webhook, the Telegram Bot API and a JSON webhook
 * would; a receiver that never answers fills its bounded queue, and what does not fit is dropped with a
 * log line; a 429's Retry-After is honoured; a command gets the JSON on its standard input. The session's
 * clock is a manual one here, so the connection bound and the end of a trading day are crossed by hand.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { notifyConfigSchema } from '../../../src/adapters/live/notify-config.ts';
import { loadTradingConfig } from '../../../src/cli/trading-config.ts';
import { ConfigError } from '../../../src/cli/config-loader.ts';
import { createLogger, type Logger } from '../../../src/engine/log.ts';
import { clearSecrets } from '../../../src/engine/secrets.ts';
import { startNotifier, type Notifier } from '../../../src/ops/notify/notifier.ts';
import { NotifyError } from '../../../src/ops/notify/senders.ts';

const TOKEN = '123456:telegram-bot-secret-token';
/** Monday 6 January 2025, 16:30 CT: half an hour before the trading day ends. */
const T0 = Date.UTC(2025, 0, 6, 22, 30);

interface Received {
  readonly path: string;
  readonly body: unknown;
  readonly at: number;
}

/** A local HTTP receiver: records every request, answers by `answer` (or never, when it returns 'hang'). */
async function receiver(
  answer: (
    req: IncomingMessage,
    n: number,
  ) => { status: number; headers?: Record<string, string>; body?: string } | 'hang' = () => ({ status: 204 }),
): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      got.push({ path: req.url ?? '', body: JSON.parse(text), at: Date.now() });
      const a = answer(req, got.length);
      if (a === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(a.status, a.headers ?? {});
      res.end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    got,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let dir: string;
let clock: number;
let journal: Journal;
let lines: string[];
let logger: Logger;
let notifier: Notifier | undefined;
const closers: Array<() => Promise<void>> = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-notify-'));
  clock = T0;
  journal = Journal.open(path.join(dir, 'journal.sqlite'), { now: () => clock });
  lines = [];
  logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
});
afterEach(async () => {
  await notifier?.stop(100);
  notifier = undefined;
  for (const close of closers.splice(0)) await close();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
  clearSecrets();
});

function start(targets: unknown, env: NodeJS.ProcessEnv = {}): Notifier {
  notifier = startNotifier(
    notifyConfigSchema.parse(targets),
    {
      entries: journal.recorded,
      now: () => clock,
      account: 'PRAC-1',
      bot: 'halflong',
      priceOf: (id, ticks) => (id === 'CON.F.US.EP.Z25' ? ticks * 0.25 : undefined),
      nameOf: (id) => (id === 'CON.F.US.EP.Z25' ? 'ESZ5' : id),
      dayFacts: () => ({ balance: 50_250, dayPnl: 250, position: 'flat', tradingState: 'ACTIVE', passLocked: true }),
    },
    { logger, env, checkEveryMs: 60_000, backoffMs: 20 },
  );
  return notifier;
}

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const fill = (tag: string) => ({
  fillId: `f-${tag}`,
  tag,
  venueOrderId: 7,
  contractId: 'CON.F.US.EP.Z25',
  side: 'buy',
  size: 1,
  price: 20_049,
  fees: 1.4,
  time: T0,
});
const refusal = (code: string, message: string) => ({
  strategyId: 'halflong',
  intent: { kind: 'place', contractId: 'CON.F.US.EP.Z25', side: 'buy', size: 1, order: { type: 'market' } },
  result: { accepted: false, code, message },
  time: T0,
});

describe('notification targets on loopback', () => {
  it('Discord gets { content }, Telegram /bot<token>/sendMessage with { chat_id, text }, a webhook the JSON; each its events', async () => {
    const r = await receiver();
    closers.push(r.close);
    start(
      [
        { type: 'discord', url: `${r.url}/discord/hook-secret-part`, events: ['fills', 'passLock'] },
        { type: 'telegram', apiUrl: r.url, chatId: -1001, events: ['rejections', 'breaches'] },
        { type: 'webhook', name: 'ops', urlEnv: 'OPS_HOOK', events: ['tradingState'] },
      ],
      { TICKLINE_TELEGRAM_TOKEN: TOKEN, OPS_HOOK: `${r.url}/ops?key=webhook-secret` },
    );
    journal.record('fill', 'event', 'halflong-3', fill('halflong-3'));
    journal.record(
      'risk-rejected',
      'event',
      'halflong-4',
      refusal('PASS_LOCKED', 'the evaluation met its pass conditions'),
    );
    // The same code again the same day: counted, not told again.
    journal.record(
      'risk-rejected',
      'event',
      'halflong-5',
      refusal('PASS_LOCKED', 'the evaluation met its pass conditions'),
    );
    journal.record('breach', 'event', null, {
      type: 6,
      rule: 'dailyLossLimit',
      duration: 2,
      time: T0,
      tradingDay: '2025-01-06',
      equity: 48_990,
      balance: 49_000,
      dayPnl: -1_010,
      level: 49_000,
    });
    journal.record('trading-state', 'event', null, {
      state: 'HALTED',
      reason: 'daily loss limit broken',
      until: null,
      time: T0,
    });
    journal.record('pass-lock', 'event', null, {
      message: 'the evaluation "X" met its pass conditions',
      mode: 'flatten',
    });
    journal.record('intent', 'event', 'halflong-6', { nothing: 'to tell' });
    await until(() => r.got.length >= 5, 'five deliveries');
    await notifier!.queues.get('ops')!.drain();

    const discord = r.got.filter((g) => g.path === '/discord/hook-secret-part').map((g) => g.body);
    expect(discord).toEqual([
      { content: '[halflong @ PRAC-1] Fill\nBUY 1 ESZ5 at 5012.25 (order halflong-3)' },
      { content: '[halflong @ PRAC-1] Evaluation passed: pass-lock\nthe evaluation "X" met its pass conditions' },
    ]);
    const telegram = r.got.filter((g) => g.path.startsWith('/bot'));
    expect(telegram.map((g) => g.path)).toEqual([`/bot${TOKEN}/sendMessage`, `/bot${TOKEN}/sendMessage`]);
    expect(telegram.map((g) => g.body)).toEqual([
      {
        chat_id: -1001,
        text: '[halflong @ PRAC-1] Refused: PASS_LOCKED\nbuy 1 ESZ5 of halflong: the evaluation met its pass conditions',
      },
      {
        chat_id: -1001,
        text: expect.stringMatching(
          /^\[halflong @ PRAC-1\] Breach: daily loss limit\nequity 48990\.00 crossed 49000\.00 on trading day 2025-01-06/,
        ),
      },
    ]);
    const webhook = r.got.filter((g) => g.path.startsWith('/ops')).map((g) => g.body);
    expect(webhook).toEqual([
      {
        event: 'tradingState',
        time: new Date(T0).toISOString(),
        account: 'PRAC-1',
        bot: 'halflong',
        title: 'Trading HALTED',
        text: 'daily loss limit broken',
        data: { state: 'HALTED', reason: 'daily loss limit broken', until: null, time: T0 },
      },
    ]);
    // No secret in any log line: the bot token, the webhook URLs.
    const log = lines.join('');
    expect(log).toContain('notifications on');
    for (const secret of [TOKEN, 'hook-secret-part', 'webhook-secret']) expect(log).not.toContain(secret);
  });

  it('a receiver that never answers: one message in delivery, the queue holds its bound, the oldest are dropped with a line', async () => {
    const r = await receiver(() => 'hang');
    closers.push(r.close);
    start([{ type: 'discord', name: 'dead', url: `${r.url}/hook`, queue: 2, timeoutMs: 60_000, events: ['fills'] }]);
    for (let i = 1; i <= 5; i++) journal.record('fill', 'event', `halflong-${i}`, fill(`halflong-${i}`));
    await until(() => r.got.length === 1, 'the first delivery');
    const queue = notifier!.queues.get('dead')!;
    expect(queue.size).toBe(2);
    const dropped = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'notification dropped');
    expect(dropped.map((l) => [l.target, l.event, l.reason])).toEqual([
      ['dead', 'fills', 'queue full (2 waiting)'],
      ['dead', 'fills', 'queue full (2 waiting)'],
    ]);
    // Stopping gives the hanging delivery a grace, then drops it and what waits, each with its line.
    await notifier!.stop(50);
    expect(lines.filter((l) => l.includes('"notification dropped"'))).toHaveLength(5);
    expect(queue.delivered).toBe(0);
    expect(queue.dropped).toBe(5);
  });

  it("honours a 429's Retry-After, retries a 500, and drops a 404 at once (trying again cannot help)", async () => {
    const r = await receiver((req, n) =>
      req.url === '/gone'
        ? { status: 404, body: 'Unknown Webhook' }
        : n === 1
          ? { status: 429, headers: { 'retry-after': '1' }, body: '{"retry_after": 1}' }
          : n === 2
            ? { status: 500 }
            : { status: 200, body: '{}' },
    );
    closers.push(r.close);
    start([
      { type: 'webhook', name: 'busy', url: `${r.url}/busy`, events: ['fills'] },
      { type: 'webhook', name: 'gone', url: `${r.url}/gone`, events: ['anomalies'] },
    ]);
    journal.record('fill', 'event', 'halflong-1', fill('halflong-1'));
    await until(() => notifier!.queues.get('busy')!.delivered === 1, 'the delivery after the retries');
    const busy = r.got.filter((g) => g.path === '/busy');
    expect(busy).toHaveLength(3);
    expect(busy[1]!.at - busy[0]!.at).toBeGreaterThanOrEqual(990);
    journal.record('anomaly', 'event', null, { message: 'position differs' });
    await until(() => notifier!.queues.get('gone')!.dropped === 1, 'the drop');
    expect(r.got.filter((g) => g.path === '/gone')).toHaveLength(1);
    expect(lines.find((l) => l.includes('"notification dropped"') && l.includes('HTTP 404'))).toMatch(
      /"target":"gone","event":"anomalies"/,
    );
  });

  it('a command gets the JSON on its standard input; one that fails is tried again, then dropped with a line', async () => {
    const out = path.join(dir, 'got.jsonl');
    const script = path.join(dir, 'append.mjs');
    writeFileSync(
      script,
      "import { appendFileSync } from 'node:fs';\nlet text = '';\nprocess.stdin.on('data', (c) => (text += c));\nprocess.stdin.on('end', () => { appendFileSync(process.argv[2], text); process.exit(process.argv[3] === 'fail' ? 3 : 0); });\n",
    );
    start([
      { type: 'command', name: 'script', argv: [process.execPath, script, out], events: ['passLock'] },
      {
        type: 'command',
        name: 'broken',
        argv: [process.execPath, script, `${out}.broken`, 'fail'],
        attempts: 2,
        events: ['passLock'],
      },
    ]);
    journal.record('pass-lock', 'event', null, { message: 'passed', mode: 'hold' });
    await until(() => notifier!.queues.get('broken')!.dropped === 1, 'the failing command to be dropped');
    await notifier!.queues.get('script')!.drain();
    const got = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(got).toEqual([
      {
        event: 'passLock',
        time: new Date(T0).toISOString(),
        account: 'PRAC-1',
        bot: 'halflong',
        title: 'Evaluation passed: pass-lock',
        text: 'passed',
        data: { message: 'passed', mode: 'hold' },
      },
    ]);
    expect(readFileSync(`${out}.broken`, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(lines.find((l) => l.includes('"notification dropped"'))).toMatch(/exited with code 3 \(2 attempts\)/);
  });
});

describe('what the notifier watches over time', () => {
  it('a hub down longer than the bound is told once, and when it is back; a shorter outage is not', async () => {
    const r = await receiver();
    closers.push(r.close);
    const n = start([{ type: 'webhook', url: `${r.url}/w`, downAfterMs: 60_000, events: ['connection'] }]);
    journal.record('realtime', 'event', null, { state: 'reconnecting' });
    clock += 30_000;
    journal.record('realtime', 'event', null, { state: 'connected' });
    journal.record('visibility', 'event', null, { blind: 'positions not polled for 90 s' });
    clock += 61_000;
    await new Promise((resolve) => setImmediate(resolve));
    n.check();
    n.check();
    clock += 5_000;
    journal.record('visibility', 'event', null, { blind: null });
    await until(() => r.got.length === 2, 'down and back');
    expect(r.got.map((g) => (g.body as { text: string }).text)).toEqual([
      'polls down for 1m 01s (positions not polled for 90 s)',
      'polls back after 1m 06s (positions and orders visible again)',
    ]);
  });

  it('the daily summary at 17:00 CT, with the day’s counts and the session’s figures', async () => {
    const r = await receiver();
    closers.push(r.close);
    const n = start([{ type: 'telegram', apiUrl: r.url, chatId: '@desk', events: ['dailySummary'] }], {
      TICKLINE_TELEGRAM_TOKEN: TOKEN,
    });
    journal.record('fill', 'event', 'halflong-1', fill('halflong-1'));
    journal.record('risk-rejected', 'event', null, refusal('MARKET_CLOSED', 'closed'));
    journal.record('risk-rejected', 'event', null, refusal('MARKET_CLOSED', 'closed'));
    await new Promise((resolve) => setImmediate(resolve));
    clock = Date.UTC(2025, 0, 6, 23, 0, 1); // 17:00:01 CT
    n.check();
    await until(() => r.got.length === 1, 'the summary');
    expect(r.got[0]!.body).toEqual({
      chat_id: '@desk',
      text: '[halflong @ PRAC-1] Trading day 2025-01-06 ended\nPnL 250.00, balance 50250.00, position flat, trading ACTIVE, pass-locked\n1 fills, 2 refused, 0 breaches, 0 anomalies',
    });
  });
});

describe('notify configuration', () => {
  it('is strict, one line per bad value, and a missing secret is named at its line before trading starts', () => {
    const parsed = liveConfigSchema.safeParse({
      strategy: { name: 'sma-cross', id: 'x' },
      contracts: ['ES'],
      timeframe: { unit: 'minute' },
      journal: 'j.sqlite',
      notify: [
        { type: 'discord', url: 'https://discord.com/api/webhooks/1/abc', events: ['fills', 'sms'] },
        { type: 'telegram', chatId: 5, token: 'inline' },
        { type: 'webhook' },
        { type: 'pager', url: 'https://x' },
      ],
    });
    expect(parsed.success).toBe(false);
    const issues = parsed.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues).toEqual([
      expect.stringMatching(/^notify\.0\.events\.1: Invalid option: expected one of "fills"\|"rejections"/),
      expect.stringMatching(/^notify\.1: Unrecognized key: "token"/),
      'notify.2.url: give url or urlEnv (the variable holding the URL), one of them',
      "notify.3.type: Invalid discriminator value. Expected 'webhook' | 'discord' | 'telegram' | 'command'",
    ]);

    const file = path.join(dir, 'paper.yaml');
    writeFileSync(
      file,
      'strategy: { name: sma-cross, id: x }\ncontracts: [ES]\ntimeframe: { unit: minute }\njournal: j.sqlite\nnotify:\n  - type: discord\n    urlEnv: DESK_DISCORD_URL\n  - { type: telegram, chatId: 5, tokenEnv: DESK_BOT_TOKEN }\n',
    );
    expect(() => loadTradingConfig(file)).not.toThrow();
    let error: unknown;
    try {
      loadTradingConfig(file, { env: {} });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(
      `${file}:7: notify[0].urlEnv: DESK_DISCORD_URL is not set in the environment`,
    );
    expect((error as ConfigError).message).toContain(
      `${file}:8: notify[1].tokenEnv: DESK_BOT_TOKEN is not set in the environment`,
    );
    expect(() => start([{ type: 'telegram', chatId: 1 }])).toThrow(NotifyError);
  });
});
