/**
 * The contract calendar: futures roots (tick size and value, fees, margin, session, cycle months, expiry
 * rule, roll rule) and the contract months they generate. One source of truth for the simulator (which
 * lists the months of its clock's date) and the backtest (which resolves a configured contract).
 *
 * Dates are UTC calendar days, written as the epoch ms of their 00:00 UTC. Business days are Monday to
 * Friday: exchange holidays are not modelled, so an expiry or roll that falls on a holiday is a day off.
 *
 * Vocabulary:
 * - a contract *expires* at the end of its last trading day (`expiry`);
 * - its *roll date* is `rollBusinessDays` business days before expiry: from that day the next cycle month
 *   is the *front month* (the gateway's `activeContract`);
 * - it is *listed* while it is one of the root's first `listed` cycle months that have not expired.
 */
import { z } from 'zod';
import { PriceGrid } from '../engine/ticks.ts';
import { TicklineError } from '../engine/errors.ts';

export const DAY_MS = 86_400_000;

/** Month codes F (January) ... Z (December). */
export const MONTH_CODES = 'FGHJKMNQUVXZ';
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

/** A delivery month: `month` 1 (January) to 12. */
export interface ContractMonth {
  readonly year: number;
  readonly month: number;
}

const Time = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day hh:mm');

export const expiryRuleSchema = z.discriminatedUnion('rule', [
  /** The nth weekday of the delivery month, less some business days (ES: third Friday; 6E: two business days before the third Wednesday). */
  z.strictObject({
    rule: z.literal('nthWeekday'),
    nth: z.number().int().min(1).max(4),
    weekday: z.enum(['monday', 'tuesday', 'wednesday', 'thursday', 'friday']),
    businessDaysBefore: z.number().int().nonnegative().default(0),
  }),
  /** Business days before the last business day of the delivery month (gold: 2, the third-last; 10-year note: 7). */
  z.strictObject({ rule: z.literal('beforeMonthEnd'), businessDays: z.number().int().nonnegative() }),
  /**
   * Business days before a day of the month preceding delivery, taken back to a business day first
   * (crude oil: 3 business days before the 25th).
   */
  z.strictObject({
    rule: z.literal('beforeDayOfPriorMonth'),
    day: z.number().int().min(1).max(28),
    businessDays: z.number().int().nonnegative(),
  }),
]);
export type ExpiryRule = z.infer<typeof expiryRuleSchema>;

/** A root as a config writes it (`roots:` in the simulator's config): validated strictly. */
export const rootSpecSchema = z.strictObject({
  /** The exchange root that starts contract names: `ES` in `ESZ6`. */
  root: z.string().regex(/^[A-Z0-9]{1,5}$/, 'upper-case letters and digits'),
  /** The gateway's symbol in ids: `EP` in `CON.F.US.EP.Z26`. */
  symbol: z.string().regex(/^[A-Z0-9]{1,6}$/, 'upper-case letters and digits'),
  /** Human name, first part of the gateway's `description`. */
  title: z.string().min(1),
  tickSize: z.number().positive(),
  tickValue: z.number().positive(),
  /** Exchange and clearing fees per contract per side (USD). */
  feePerSide: z.number().nonnegative().default(0),
  /** Intraday margin per contract (USD), for the simulator's buying-power check. */
  dayMargin: z.number().nonnegative().default(0),
  /** Contract group of data exports. */
  group: z.string().min(1).default('Other'),
  /** Where a synthetic market of this root starts (decimal price). */
  startPrice: z.number().positive(),
  /** Delivery months, as month codes: `HMUZ` quarterly, `FGHJKMNQUVXZ` every month. */
  cycle: z.string().regex(/^[FGHJKMNQUVXZ]+$/, 'month codes F ... Z'),
  expiry: expiryRuleSchema,
  /** The front month moves to the next cycle month this many business days before expiry. */
  rollBusinessDays: z.number().int().nonnegative().default(0),
  /** How many unexpired cycle months are listed at once. */
  listed: z.number().int().min(1).max(24).default(2),
  /** The exchange session (data only: the simulator and the backtest read the hours from exchange-hours.ts). */
  session: z
    .strictObject({ timeZone: z.string().min(1), opens: Time, closes: Time })
    .default({ timeZone: 'America/Chicago', opens: '17:00', closes: '16:00' }),
});
export type RootSpecInput = z.input<typeof rootSpecSchema>;
export type RootSpec = z.output<typeof rootSpecSchema>;

/** One contract month of a root, as both the simulator and the backtest see it. */
export interface FuturesContract {
  /** `CON.F.US.EP.Z26`. */
  readonly id: string;
  /** `ESZ6`: the gateway's short name (one-digit year). */
  readonly name: string;
  /** `E-mini S&P 500: December 2026`. */
  readonly description: string;
  /** `F.US.EP`. */
  readonly symbolId: string;
  readonly tickSize: number;
  readonly tickValue: number;
  readonly grid: PriceGrid;
  readonly feePerSide: number;
  readonly dayMargin: number;
  readonly startPrice: number;
  readonly group: string;
  readonly spec: RootSpec;
  readonly month: ContractMonth;
  /** 00:00 UTC of the last trading day. */
  readonly expiry: number;
}

/** What a contract is on a given date. */
export type ContractStatus = 'front' | 'listed' | 'expired' | 'unlisted';

export class UnknownRootError extends TicklineError {
  override readonly name = 'UnknownRootError';
  readonly kind = 'config';
  readonly code = 'UNKNOWN_ROOT';
}

// ---------------------------------------------------------------- days

/** 00:00 UTC of the day holding `t`. */
export function dayOf(t: number): number {
  return Math.floor(t / DAY_MS) * DAY_MS;
}

export function isBusinessDay(day: number): boolean {
  const weekday = new Date(day).getUTCDay();
  return weekday !== 0 && weekday !== 6;
}

/** The business day `n` business days before `day` (`n` 0: `day` itself, taken back to a business day). */
export function businessDaysBefore(day: number, n: number): number {
  let d = dayOf(day);
  while (!isBusinessDay(d)) d -= DAY_MS;
  for (let left = n; left > 0; ) {
    d -= DAY_MS;
    if (isBusinessDay(d)) left--;
  }
  return d;
}

function monthIndex(m: ContractMonth): number {
  return m.year * 12 + (m.month - 1);
}

function fromIndex(index: number): ContractMonth {
  return { year: Math.floor(index / 12), month: (index % 12) + 1 };
}

export function monthCode(m: ContractMonth): string {
  return MONTH_CODES[m.month - 1]!;
}

/** `Z26` for December 2026. */
export function monthLabel(m: ContractMonth): string {
  return `${monthCode(m)}${String(m.year % 100).padStart(2, '0')}`;
}

// ---------------------------------------------------------------- the calendar

/** The roots the project knows, with their exchange specifications (CME Group contract specs). */
export const DEFAULT_ROOTS: readonly RootSpecInput[] = Object.freeze([
  equityIndex('ES', 'EP', 'E-mini S&P 500', 0.25, 12.5, 1.4, 500, 6700),
  equityIndex('MES', 'MES', 'Micro E-mini S&P 500', 0.25, 1.25, 0.37, 50, 6700),
  equityIndex('NQ', 'ENQ', 'E-mini NASDAQ-100', 0.25, 5, 1.4, 1000, 24500),
  equityIndex('MNQ', 'MNQ', 'Micro E-mini NASDAQ-100', 0.25, 0.5, 0.37, 50, 24500),
  equityIndex('YM', 'YM', 'E-mini Dow ($5)', 1, 5, 1.4, 500, 46500),
  equityIndex('MYM', 'MYM', 'Micro E-mini Dow', 1, 0.5, 0.37, 50, 46500),
  equityIndex('RTY', 'RTY', 'E-mini Russell 2000', 0.1, 5, 1.4, 500, 2450),
  equityIndex('M2K', 'M2K', 'Micro E-mini Russell 2000', 0.1, 0.5, 0.37, 50, 2450),
  // Gold and silver: last trade on the third-last business day of the month; the front moves before first notice.
  metal('GC', 'GCE', 'Gold', 0.1, 10, 1.62, 1000, 4000, 'GJMQVZ'),
  metal('MGC', 'MGC', 'Micro Gold', 0.1, 1, 0.52, 50, 4000, 'GJMQVZ'),
  metal('SI', 'SIE', 'Silver', 0.005, 25, 1.62, 1000, 48, 'HKNUZ'),
  // Crude oil: every month; trading ends 3 business days before the 25th of the month before (micro: 4).
  crude('CL', 'CLE', 'Crude Oil', 0.01, 10, 1.52, 500, 3),
  crude('MCL', 'MCLE', 'Micro WTI Crude Oil', 0.01, 1, 0.52, 50, 4),
  {
    root: 'ZN',
    symbol: 'TYA',
    title: '10-Year T-Note',
    tickSize: 0.015625,
    tickValue: 15.625,
    feePerSide: 0.8,
    dayMargin: 250,
    group: 'Interest Rates',
    startPrice: 112,
    cycle: 'HMUZ',
    expiry: { rule: 'beforeMonthEnd', businessDays: 7 },
    rollBusinessDays: 16,
    listed: 3,
  },
  {
    root: '6E',
    symbol: 'EU6',
    title: 'Euro FX',
    tickSize: 0.00005,
    tickValue: 6.25,
    feePerSide: 1.6,
    dayMargin: 250,
    group: 'Currencies',
    startPrice: 1.16,
    cycle: 'HMUZ',
    expiry: { rule: 'nthWeekday', nth: 3, weekday: 'wednesday', businessDaysBefore: 2 },
    rollBusinessDays: 6,
    listed: 4,
  },
]);

/**
 * Roots that trade another root's price (a micro contract and its mini: one index or one commodity, so
 * one price). The simulator gives both the same synthetic path, each on its own tick grid.
 */
export const PRICE_PATHS: Readonly<Record<string, string>> = Object.freeze({
  MES: 'ES',
  MNQ: 'NQ',
  MYM: 'YM',
  M2K: 'RTY',
  MGC: 'GC',
  MCL: 'CL',
});

/** The root whose price path `root` trades: its mini for a micro contract, itself otherwise. */
export function pricePathOf(root: string): string {
  return PRICE_PATHS[root] ?? root;
}

function equityIndex(
  root: string,
  symbol: string,
  title: string,
  tickSize: number,
  tickValue: number,
  feePerSide: number,
  dayMargin: number,
  startPrice: number,
): RootSpecInput {
  // Third Friday of March, June, September, December; volume moves to the next month on the Thursday
  // eight days before (six business days).
  return {
    root,
    symbol,
    title,
    tickSize,
    tickValue,
    feePerSide,
    dayMargin,
    startPrice,
    group: 'Equity Index',
    cycle: 'HMUZ',
    expiry: { rule: 'nthWeekday', nth: 3, weekday: 'friday' },
    rollBusinessDays: 6,
    listed: 5,
  };
}

function metal(
  root: string,
  symbol: string,
  title: string,
  tickSize: number,
  tickValue: number,
  feePerSide: number,
  dayMargin: number,
  startPrice: number,
  cycle: string,
): RootSpecInput {
  return {
    root,
    symbol,
    title,
    tickSize,
    tickValue,
    feePerSide,
    dayMargin,
    startPrice,
    group: 'Metals',
    cycle,
    expiry: { rule: 'beforeMonthEnd', businessDays: 2 },
    rollBusinessDays: 25,
    listed: 4,
  };
}

function crude(
  root: string,
  symbol: string,
  title: string,
  tickSize: number,
  tickValue: number,
  feePerSide: number,
  dayMargin: number,
  businessDays: number,
): RootSpecInput {
  return {
    root,
    symbol,
    title,
    tickSize,
    tickValue,
    feePerSide,
    dayMargin,
    startPrice: 60,
    group: 'Energy',
    cycle: MONTH_CODES,
    expiry: { rule: 'beforeDayOfPriorMonth', day: 25, businessDays },
    rollBusinessDays: 2,
    listed: 6,
  };
}

const ID_PATTERN = /^CON\.F\.US\.([A-Z0-9]+)\.([FGHJKMNQUVXZ])(\d{2})$/;
const SYMBOL_PATTERN = /^F\.US\.([A-Z0-9]+)$/;

export class ContractCalendar {
  private readonly byRoot = new Map<string, RootSpec>();
  private readonly bySymbol = new Map<string, RootSpec>();
  /** Roots by decreasing length, so `MESZ6` is read as MES before ME or M. */
  private readonly rootsLongestFirst: RootSpec[];
  private readonly contracts = new Map<string, FuturesContract>();
  private readonly grids = new Map<string, PriceGrid>();
  private readonly expiries = new Map<string, number>();

  constructor(roots: readonly RootSpecInput[] = DEFAULT_ROOTS) {
    for (const input of roots) {
      const spec = rootSpecSchema.parse(input);
      this.byRoot.set(spec.root, spec);
      this.bySymbol.set(spec.symbol, spec);
    }
    if (this.bySymbol.size !== this.byRoot.size) throw new RangeError('two roots share a gateway symbol');
    this.rootsLongestFirst = [...this.byRoot.values()].sort((a, b) => b.root.length - a.root.length);
  }

  /** This calendar with more roots (a root of the same name replaces the known one). */
  withRoots(extra: readonly RootSpecInput[]): ContractCalendar {
    if (extra.length === 0) return this;
    const names = new Set(extra.map((r) => r.root));
    return new ContractCalendar([...[...this.byRoot.values()].filter((r) => !names.has(r.root)), ...extra]);
  }

  roots(): readonly RootSpec[] {
    return [...this.byRoot.values()];
  }

  root(root: string): RootSpec | undefined {
    return this.byRoot.get(root.toUpperCase());
  }

  private spec(root: string | RootSpec): RootSpec {
    if (typeof root !== 'string') return root;
    const spec = this.root(root);
    if (!spec) throw new UnknownRootError(`unknown root "${root}"; known: ${[...this.byRoot.keys()].join(', ')}`);
    return spec;
  }

  /** The root's price grid (every month of a root shares it). */
  grid(root: string | RootSpec): PriceGrid {
    const spec = this.spec(root);
    let grid = this.grids.get(spec.root);
    if (!grid) {
      grid = new PriceGrid(spec.tickSize, spec.tickValue);
      this.grids.set(spec.root, grid);
    }
    return grid;
  }

  /** True when `month` is one of the root's delivery months. */
  inCycle(root: string | RootSpec, month: ContractMonth): boolean {
    return this.spec(root).cycle.includes(monthCode(month));
  }

  /** 00:00 UTC of the month's last trading day. */
  expiry(root: string | RootSpec, month: ContractMonth): number {
    const spec = this.spec(root);
    const key = `${spec.root}:${monthIndex(month)}`;
    let day = this.expiries.get(key);
    if (day === undefined) {
      day = expiryDay(spec.expiry, month);
      this.expiries.set(key, day);
    }
    return day;
  }

  /** The day the front month moves past `month`: `daysBeforeExpiry` business days before its expiry. */
  rollDate(root: string | RootSpec, month: ContractMonth, daysBeforeExpiry = this.spec(root).rollBusinessDays): number {
    return businessDaysBefore(this.expiry(root, month), daysBeforeExpiry);
  }

  /** The root's delivery months in order, from a little before `t` on (callers stop when they have enough). */
  private *monthsFrom(spec: RootSpec, t: number): Generator<ContractMonth> {
    const d = new Date(t);
    // Two months back: an expiry rule can end trading in the month before delivery (crude oil).
    for (let index = d.getUTCFullYear() * 12 + d.getUTCMonth() - 2; ; index++) {
      const month = fromIndex(index);
      if (spec.cycle.includes(monthCode(month))) yield month;
    }
  }

  /** The front month at `t`: the first delivery month whose roll date is after `t`'s day. */
  frontMonth(root: string | RootSpec, t: number, daysBeforeExpiry?: number): ContractMonth {
    const spec = this.spec(root);
    const day = dayOf(t);
    for (const month of this.monthsFrom(spec, t)) {
      if (this.rollDate(spec, month, daysBeforeExpiry ?? spec.rollBusinessDays) > day) return month;
    }
    throw new Error('unreachable: the month generator is endless');
  }

  /** The months listed on `t`'s day: the first `listed` delivery months not yet expired, nearest first. */
  contractsOn(root: string | RootSpec, t: number): ContractMonth[] {
    const spec = this.spec(root);
    const day = dayOf(t);
    const months: ContractMonth[] = [];
    for (const month of this.monthsFrom(spec, t)) {
      if (this.expiry(spec, month) < day) continue;
      months.push(month);
      if (months.length === spec.listed) break;
    }
    return months;
  }

  /** The contract of one month (memoised: the simulator asks for the same few ids at every price point). */
  contract(root: string | RootSpec, month: ContractMonth): FuturesContract {
    const spec = this.spec(root);
    const id = `CON.F.US.${spec.symbol}.${monthLabel(month)}`;
    let contract = this.contracts.get(id);
    if (!contract) {
      if (!this.inCycle(spec, month))
        throw new RangeError(`${spec.root} has no ${MONTH_NAMES[month.month - 1]} contract (cycle ${spec.cycle})`);
      contract = {
        id,
        name: `${spec.root}${monthCode(month)}${month.year % 10}`,
        description: `${spec.title}: ${MONTH_NAMES[month.month - 1]} ${month.year}`,
        symbolId: `F.US.${spec.symbol}`,
        tickSize: spec.tickSize,
        tickValue: spec.tickValue,
        grid: this.grid(spec),
        feePerSide: spec.feePerSide,
        dayMargin: spec.dayMargin,
        startPrice: spec.startPrice,
        group: spec.group,
        spec,
        month,
        expiry: this.expiry(spec, month),
      };
      this.contracts.set(id, contract);
    }
    return contract;
  }

  /** The contract of a gateway id (`CON.F.US.EP.Z26`), or undefined when the id names no delivery month of a known root. */
  byId(id: string): FuturesContract | undefined {
    const cached = this.contracts.get(id);
    if (cached) return cached;
    const match = ID_PATTERN.exec(id);
    const spec = match && this.bySymbol.get(match[1]!);
    if (!match || !spec) return undefined;
    const month = { year: 2000 + Number(match[3]), month: MONTH_CODES.indexOf(match[2]!) + 1 };
    return this.inCycle(spec, month) ? this.contract(spec, month) : undefined;
  }

  /**
   * A contract from what people write, case-insensitive: a gateway id (`CON.F.US.EP.Z26`), a name with a
   * two-digit year (`ESZ26`) or the gateway's one-digit year (`ESZ6`: the year ending in 6 nearest to
   * `on`, the earlier one on a tie), or a symbol id (`F.US.EP`: the front month on `on`).
   */
  resolve(text: string, on: number): FuturesContract | undefined {
    const key = text.trim().toUpperCase();
    if (key.startsWith('CON.')) return this.byId(key);
    const symbol = SYMBOL_PATTERN.exec(key);
    if (symbol) {
      const spec = this.bySymbol.get(symbol[1]!);
      return spec && this.contract(spec, this.frontMonth(spec, on));
    }
    for (const spec of this.rootsLongestFirst) {
      if (!key.startsWith(spec.root)) continue;
      const rest = /^([FGHJKMNQUVXZ])(\d{1,2})$/.exec(key.slice(spec.root.length));
      if (!rest) continue;
      const digits = rest[2]!;
      const year =
        digits.length === 2
          ? 2000 + Number(digits)
          : nearestYearEndingIn(Number(digits), new Date(on).getUTCFullYear());
      const month = { year, month: MONTH_CODES.indexOf(rest[1]!) + 1 };
      return this.inCycle(spec, month) ? this.contract(spec, month) : undefined;
    }
    return undefined;
  }

  /** Front, listed (a later month, or the old front between its roll date and expiry), expired, or not listed yet, on `t`'s day. */
  status(contract: FuturesContract, t: number): ContractStatus {
    const day = dayOf(t);
    if (contract.expiry < day) return 'expired';
    const front = this.frontMonth(contract.spec, t);
    if (monthIndex(front) === monthIndex(contract.month)) return 'front';
    return this.contractsOn(contract.spec, t).some((m) => monthIndex(m) === monthIndex(contract.month))
      ? 'listed'
      : 'unlisted';
  }

  /** Every contract listed on `t`'s day, root by root in registry order, nearest month first. */
  listedOn(t: number): FuturesContract[] {
    return this.roots().flatMap((spec) => this.contractsOn(spec, t).map((month) => this.contract(spec, month)));
  }
}

function nearestYearEndingIn(digit: number, reference: number): number {
  const below = reference - ((((reference - digit) % 10) + 10) % 10);
  return reference - below <= 5 ? below : below + 10;
}

function expiryDay(rule: ExpiryRule, m: ContractMonth): number {
  const first = Date.UTC(m.year, m.month - 1, 1);
  switch (rule.rule) {
    case 'nthWeekday': {
      const target = WEEKDAYS.indexOf(rule.weekday);
      const offset = (target - new Date(first).getUTCDay() + 7) % 7;
      const day = first + (offset + 7 * (rule.nth - 1)) * DAY_MS;
      return businessDaysBefore(day, rule.businessDaysBefore);
    }
    case 'beforeMonthEnd':
      return businessDaysBefore(Date.UTC(m.year, m.month, 0), rule.businessDays);
    case 'beforeDayOfPriorMonth':
      return businessDaysBefore(Date.UTC(m.year, m.month - 2, rule.day), rule.businessDays);
  }
}

/** The calendar of the built-in roots. */
export const CALENDAR = new ContractCalendar();
