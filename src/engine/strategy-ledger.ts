/**
 * Each strategy instance's own share of the account: position, average price, realized PnL, fees and
 * closed trades per contract, attributed from fills by the owner of their order (`<strategyId>-<seq>`).
 *
 * The gateway nets every strategy's orders into one position per contract. A fill of a strategy's order is
 * that strategy's. A fill of an order no strategy owns (the engine's own risk orders, an operator's, a manual
 * trade at the gateway) is allocated so that the lines always sum to the account: a fill that takes the
 * account flat (or through flat) takes every line flat at its price, crossing the strategies internally; one
 * that only reduces takes the unattributed line first, then the strategies on the account's side in
 * proportion to their sizes; what opens or adds goes to the unattributed line.
 *
 * A contract that only one strategy trades, on a venue that answers at once (a backtest), is not booked
 * here at all: that strategy's line is the account's book for the contract, read from accounting when
 * asked. The ledger starts booking such a contract only before a fill its owner does not explain (another
 * strategy's, a foreign one, a risk fill that does not only reduce), from the account's book at that moment:
 * the common backtest pays one prefix test per fill.
 */
import { bookFill, type Accounting, type ClosedTrade } from './accounting.ts';
import { ContractMap } from './contract-map.ts';
import { EngineError } from './errors.ts';
import type { ContractSpec, Fill } from './types.ts';

/** The strategy id of what no strategy owns: positions opened by foreign or risk fills, restored positions. */
export const UNATTRIBUTED = '(unattributed)';

/** One strategy's share of one contract (or the unattributed rest). */
export interface StrategyPosition {
  readonly strategyId: string;
  readonly contractId: string;
  /** Signed size: positive long, negative short. */
  readonly size: number;
  /** Average entry price in ticks; NaN when flat. */
  readonly averagePrice: number;
  /** At the account's last price of the contract. */
  readonly unrealizedPnl: number;
  readonly realizedPnl: number;
  readonly fees: number;
  /** Closed trades (one per fill, or share of a fill, that reduced this line). */
  readonly trades: number;
}

/** One strategy's figures over all its contracts. */
export interface StrategySnapshot {
  readonly strategyId: string;
  readonly realizedPnl: number;
  readonly unrealizedPnl: number;
  readonly fees: number;
  /** realized + unrealized - fees. */
  readonly netPnl: number;
  readonly trades: number;
  readonly positions: readonly StrategyPosition[];
}

interface Line {
  readonly strategyId: string;
  size: number;
  averagePrice: number;
  entryTime: number;
  entryFeePerContract: number;
  entryLabel: string | undefined;
  realizedPnl: number;
  fees: number;
  closed: ClosedTrade[];
  /** Closed trades so far (the list may keep only the latest). */
  trades: number;
}

interface ContractLedger {
  readonly contractId: string;
  readonly tickValue: number;
  /** Strategies that declared the contract, in the order they were registered. */
  readonly owners: string[];
  /** While the contract's only owner's line is the account's book: its order id prefix; booked once undefined. */
  derivedPrefix: string | undefined;
  /** That owner's id (while `derivedPrefix` is set). */
  derivedOwner: string | undefined;
  readonly lines: Line[];
  readonly unattributed: Line;
}

function newLine(strategyId: string): Line {
  return {
    strategyId,
    size: 0,
    averagePrice: NaN,
    entryTime: NaN,
    entryFeePerContract: 0,
    entryLabel: undefined,
    realizedPnl: 0,
    fees: 0,
    closed: [],
    trades: 0,
  };
}

/** Client ids are `<strategyId>-<sequence>` (bracket legs `<entry id>:sl`): the owner is what precedes the last dash. */
export function ownerOf(orderId: string): string {
  return orderId.slice(0, Math.max(0, orderId.lastIndexOf('-')));
}

export interface StrategyLedgerOptions {
  readonly contracts: readonly ContractSpec[];
  readonly accounting: Accounting;
  readonly riskStrategyId: string;
  /** A venue that answers later (live, paper): every contract is booked here from the start (fills are few). */
  readonly bookEverything: boolean;
  /** Closed trades kept per line (the latest); all by default. */
  readonly tradeMemory?: number;
}

export class StrategyLedger {
  private readonly ledgers: ContractMap<ContractLedger>;
  private readonly strategies = new Set<string>();
  private readonly accounting: Accounting;
  private readonly riskStrategyId: string;
  private readonly riskPrefix: string;
  private readonly bookEverything: boolean;
  private readonly tradeMemory: number;
  /** Some contract is declared by two strategies or more (their targets then move their own lines). */
  anyShared = false;

  constructor(options: StrategyLedgerOptions) {
    this.accounting = options.accounting;
    this.riskStrategyId = options.riskStrategyId;
    this.riskPrefix = `${options.riskStrategyId}-`;
    this.bookEverything = options.bookEverything;
    this.tradeMemory = options.tradeMemory ?? Infinity;
    this.ledgers = new ContractMap(
      options.contracts.map((contract) => [
        contract.id,
        {
          contractId: contract.id,
          tickValue: contract.grid.tickValue,
          owners: [],
          derivedPrefix: undefined,
          derivedOwner: undefined,
          lines: [],
          unattributed: newLine(UNATTRIBUTED),
        } satisfies ContractLedger,
      ]),
    );
  }

  /** A strategy instance and the contracts it declares (before the first fill). */
  register(strategyId: string, contractIds: readonly string[]): void {
    this.strategies.add(strategyId);
    for (const contractId of contractIds) {
      const ledger = this.ledgers.get(contractId);
      if (ledger === undefined || ledger.owners.includes(strategyId)) continue;
      ledger.owners.push(strategyId);
      ledger.lines.push(newLine(strategyId));
      if (ledger.owners.length > 1) this.anyShared = true;
      const derived = ledger.owners.length === 1 && !this.bookEverything;
      ledger.derivedPrefix = derived ? `${strategyId}-` : undefined;
      ledger.derivedOwner = derived ? strategyId : undefined;
    }
  }

  /** True when two strategies or more declare the contract. */
  isShared(contractId: string): boolean {
    return this.anyShared && (this.ledgers.get(contractId)?.owners.length ?? 0) > 1;
  }

  isStrategy(strategyId: string): boolean {
    return this.strategies.has(strategyId);
  }

  /**
   * Before accounting applies a fill: a contract whose line is still the account's book starts being
   * booked here when its owner does not explain this fill. `owner` is the strategy of the fill's order
   * where the book still holds it (an order id need not carry its strategy's prefix); else the id's prefix.
   */
  beforeFill(fill: Fill, owner: string | undefined): void {
    const ledger = this.ledgers.get(fill.contractId);
    if (ledger === undefined) return;
    const prefix = ledger.derivedPrefix;
    if (prefix === undefined) return;
    const id = fill.orderId;
    if (
      owner !== undefined
        ? owner === ledger.derivedOwner
        : id.startsWith(prefix) && id.indexOf('-', prefix.length) === -1
    )
      return;
    if (
      owner !== undefined
        ? owner === this.riskStrategyId
        : id.startsWith(this.riskPrefix) && id.indexOf('-', this.riskPrefix.length) === -1
    ) {
      const position = this.accounting.position(fill.contractId);
      const signed = fill.side === 'buy' ? fill.size : -fill.size;
      if (position !== 0 && Math.sign(signed) !== Math.sign(position) && fill.size <= Math.abs(position)) return;
    }
    this.materialize(ledger);
  }

  /** After accounting applied a fill (not a repeat): its owner's line, or its allocation. */
  afterFill(fill: Fill, owner: string | undefined, tradingDay: string, label: string | undefined): void {
    const ledger = this.ledgers.get(fill.contractId);
    if (ledger === undefined || ledger.derivedPrefix !== undefined) return;
    const signed = fill.side === 'buy' ? fill.size : -fill.size;
    const strategyId = owner ?? ownerOf(fill.orderId);
    if (this.strategies.has(strategyId)) {
      this.book(ledger, this.lineOf(ledger, strategyId), signed, fill.fees, fill, tradingDay, label);
      return;
    }
    this.allocate(ledger, signed, fill, tradingDay);
  }

  /** Positions restored at a live restart belong to no strategy until `assign` hands them over. */
  restore(positions: ReadonlyArray<{ contractId: string; size: number; averagePrice: number }>): void {
    for (const position of positions) {
      const ledger = this.ledgers.get(position.contractId);
      if (ledger === undefined) continue;
      // The account's book already holds the restored position: it is the unattributed line's, not the owner's.
      ledger.derivedPrefix = undefined;
      ledger.derivedOwner = undefined;
      const line = ledger.unattributed;
      line.size = position.size;
      line.averagePrice = position.size === 0 ? NaN : position.averagePrice;
    }
  }

  /**
   * Hand `size` contracts (signed) of the unattributed line to a strategy at that line's average price, no
   * PnL booked: a restart whose journal knows which strategy held what.
   */
  assign(strategyId: string, contractId: string, size: number): void {
    const ledger = this.ledgers.get(contractId);
    if (ledger === undefined) throw new EngineError('UNKNOWN_CONTRACT', `assign: unknown contract '${contractId}'`);
    const rest = ledger.unattributed;
    if (
      !Number.isInteger(size) ||
      size === 0 ||
      Math.sign(size) !== Math.sign(rest.size) ||
      Math.abs(size) > Math.abs(rest.size)
    )
      throw new EngineError(
        'INVALID_RESTORE',
        `assign: ${size} of ${contractId} to '${strategyId}', but the unattributed line holds ${rest.size}`,
      );
    this.materialize(ledger);
    const line = this.lineOf(ledger, strategyId);
    if (line.size !== 0 && Math.sign(line.size) !== Math.sign(size))
      throw new EngineError('INVALID_RESTORE', `assign: '${strategyId}' holds ${line.size} of ${contractId}`);
    const price = rest.averagePrice;
    line.averagePrice = line.size === 0 ? price : (line.averagePrice * line.size + price * size) / (line.size + size);
    line.size += size;
    rest.size -= size;
    if (rest.size === 0) rest.averagePrice = NaN;
  }

  /** A strategy's line of a contract (an empty one when it has none). */
  position(strategyId: string, contractId: string): StrategyPosition {
    const ledger = this.ledgers.get(contractId);
    if (ledger === undefined) return this.view(strategyId, contractId, newLine(strategyId), 0);
    const line = this.current(ledger, strategyId);
    return this.view(strategyId, contractId, line ?? newLine(strategyId), ledger.tickValue);
  }

  /** A strategy's signed size on a contract. */
  size(strategyId: string, contractId: string): number {
    const ledger = this.ledgers.get(contractId);
    if (ledger === undefined) return 0;
    if (ledger.derivedPrefix !== undefined)
      return ledger.owners[0] === strategyId ? this.accounting.position(contractId) : 0;
    if (strategyId === UNATTRIBUTED) return ledger.unattributed.size;
    return ledger.lines.find((l) => l.strategyId === strategyId)?.size ?? 0;
  }

  averagePrice(strategyId: string, contractId: string): number {
    const ledger = this.ledgers.get(contractId);
    if (ledger === undefined) return NaN;
    if (ledger.derivedPrefix !== undefined)
      return ledger.owners[0] === strategyId ? this.accounting.averagePrice(contractId) : NaN;
    return this.current(ledger, strategyId)?.averagePrice ?? NaN;
  }

  /** Every strategy's line per contract (declared or traded), and the unattributed line where it had a fill. */
  positions(): StrategyPosition[] {
    const out: StrategyPosition[] = [];
    for (const ledger of this.ledgers.values()) {
      if (ledger.derivedPrefix !== undefined) {
        const owner = ledger.owners[0]!;
        out.push(this.view(owner, ledger.contractId, this.current(ledger, owner)!, ledger.tickValue));
        continue;
      }
      for (const line of ledger.lines) out.push(this.view(line.strategyId, ledger.contractId, line, ledger.tickValue));
      const rest = ledger.unattributed;
      if (rest.size !== 0 || rest.fees !== 0 || rest.trades !== 0 || rest.realizedPnl !== 0)
        out.push(this.view(UNATTRIBUTED, ledger.contractId, rest, ledger.tickValue));
    }
    return out;
  }

  snapshot(strategyId: string): StrategySnapshot {
    const positions = this.positions().filter((p) => p.strategyId === strategyId);
    let realizedPnl = 0;
    let unrealizedPnl = 0;
    let fees = 0;
    let trades = 0;
    for (const p of positions) {
      realizedPnl += p.realizedPnl;
      unrealizedPnl += p.unrealizedPnl;
      fees += p.fees;
      trades += p.trades;
    }
    return {
      strategyId,
      realizedPnl,
      unrealizedPnl,
      fees,
      netPnl: realizedPnl + unrealizedPnl - fees,
      trades,
      positions,
    };
  }

  /** A strategy's closed trades (UNATTRIBUTED: the rest's), in the order they closed: the input of its statistics. */
  trades(strategyId: string): ClosedTrade[] {
    const out: ClosedTrade[] = [];
    for (const ledger of this.ledgers.values()) {
      const line = this.current(ledger, strategyId);
      if (line !== undefined) for (const trade of line.closed) out.push(trade);
    }
    // Stable: within one contract the order is kept; across contracts, by exit time.
    return out.sort((a, b) => a.exitTime - b.exitTime);
  }

  /** The line as it stands: a derived contract's owner reads the account's book. */
  private current(ledger: ContractLedger, strategyId: string): Line | undefined {
    if (ledger.derivedPrefix !== undefined) {
      if (ledger.owners[0] !== strategyId) return undefined;
      const line = newLine(strategyId);
      this.copyBook(ledger, line);
      return line;
    }
    if (strategyId === UNATTRIBUTED) return ledger.unattributed;
    return ledger.lines.find((l) => l.strategyId === strategyId);
  }

  private copyBook(ledger: ContractLedger, line: Line): void {
    const book = this.accounting.bookOf(ledger.contractId);
    line.size = book.size;
    line.averagePrice = book.averagePrice;
    line.entryTime = book.entryTime;
    line.entryFeePerContract = book.entryFeePerContract;
    line.entryLabel = book.entryLabel;
    line.realizedPnl = book.realizedPnl;
    line.fees = book.fees;
    line.closed = this.accounting.trades.filter((t) => t.contractId === ledger.contractId);
    line.trades = line.closed.length;
  }

  /** From now on the contract is booked here, starting from the account's book as its owner's line. */
  private materialize(ledger: ContractLedger): void {
    if (ledger.derivedPrefix === undefined) return;
    this.copyBook(ledger, ledger.lines[0]!);
    ledger.derivedPrefix = undefined;
    ledger.derivedOwner = undefined;
  }

  private view(strategyId: string, contractId: string, line: Line, tickValue: number): StrategyPosition {
    const last = this.accounting.lastPrice(contractId);
    return {
      strategyId,
      contractId,
      size: line.size,
      averagePrice: line.averagePrice,
      unrealizedPnl: line.size === 0 || !(last === last) ? 0 : (last - line.averagePrice) * line.size * tickValue,
      realizedPnl: line.realizedPnl,
      fees: line.fees,
      trades: line.trades,
    };
  }

  private lineOf(ledger: ContractLedger, strategyId: string): Line {
    let line = ledger.lines.find((l) => l.strategyId === strategyId);
    if (line === undefined) {
      // A strategy trading a contract it did not declare still gets its own line.
      line = newLine(strategyId);
      ledger.lines.push(line);
    }
    return line;
  }

  /** A fill no strategy owns, shared out so that the lines keep summing to the account. */
  private allocate(ledger: ContractLedger, signed: number, fill: Fill, tradingDay: string): void {
    const rest = ledger.unattributed;
    let total = rest.size;
    for (const line of ledger.lines) total += line.size;
    const after = total + signed;
    const pieces: Array<{ line: Line; size: number }> = [];
    if (total !== 0 && Math.sign(signed) !== Math.sign(total) && Math.sign(after) !== Math.sign(total)) {
      // Flat or through flat: every line closes at the fill's price (crossing the strategies internally),
      // and what goes beyond flat opens on the unattributed line.
      for (const line of ledger.lines) if (line.size !== 0) pieces.push({ line, size: -line.size });
      const net = after - rest.size;
      if (net !== 0) pieces.push({ line: rest, size: net });
    } else if (total !== 0 && Math.sign(signed) !== Math.sign(total)) {
      // Reduces without reaching flat: the unattributed line first, then the account's side in proportion.
      const direction = Math.sign(total);
      let left = -signed * direction;
      if (Math.sign(rest.size) === direction) {
        const used = Math.min(left, Math.abs(rest.size));
        pieces.push({ line: rest, size: -used * direction });
        left -= used;
      }
      if (left > 0) this.shareOut(ledger.lines, direction, left, pieces);
    } else {
      pieces.push({ line: rest, size: signed });
    }
    let traded = 0;
    for (const piece of pieces) traded += Math.abs(piece.size);
    let feesLeft = fill.fees;
    for (let k = 0; k < pieces.length; k++) {
      const piece = pieces[k]!;
      const fees = k === pieces.length - 1 ? feesLeft : (fill.fees * Math.abs(piece.size)) / traded;
      feesLeft -= fees;
      this.book(ledger, piece.line, piece.size, fees, fill, tradingDay, undefined);
    }
  }

  /** `amount` contracts taken from the lines on `direction`'s side, in proportion (largest remainder, then line order). */
  private shareOut(
    lines: readonly Line[],
    direction: number,
    amount: number,
    pieces: Array<{ line: Line; size: number }>,
  ): void {
    const holders = lines.filter((l) => Math.sign(l.size) === direction);
    let held = 0;
    for (const line of holders) held += Math.abs(line.size);
    const shares = holders.map((line) => Math.floor((amount * Math.abs(line.size)) / held));
    let given = shares.reduce((a, b) => a + b, 0);
    const order = holders
      .map((line, k) => ({ k, remainder: (amount * Math.abs(line.size)) % held }))
      .sort((a, b) => b.remainder - a.remainder || a.k - b.k);
    for (let j = 0; given < amount; j = (j + 1) % order.length) {
      const k = order[j]!.k;
      if (shares[k]! < Math.abs(holders[k]!.size)) {
        shares[k]!++;
        given++;
      }
    }
    holders.forEach((line, k) => {
      if (shares[k]! > 0) pieces.push({ line, size: -shares[k]! * direction });
    });
  }

  /** One signed piece of a fill on a line (average cost, as accounting books the account). */
  private book(
    ledger: ContractLedger,
    line: Line,
    signed: number,
    fees: number,
    fill: Fill,
    tradingDay: string,
    label: string | undefined,
  ): void {
    line.fees += fees;
    const size = Math.abs(signed);
    const feePerContract = size === 0 ? 0 : fees / size;
    const step = bookFill(line, signed, fill, fees, feePerContract, ledger.tickValue, false, label);
    if (step === undefined) return;
    const { closing, direction, pnl } = step;
    line.realizedPnl += pnl;
    line.trades++;
    line.closed.push({
      contractId: ledger.contractId,
      side: direction > 0 ? 'buy' : 'sell',
      size: closing,
      entryPrice: step.entryPrice,
      exitPrice: fill.price,
      entryTime: step.entryTime,
      exitTime: fill.time,
      pnl,
      fees: (step.entryFeePerContract + feePerContract) * closing,
      exitFillId: fill.fillId,
      tradingDay,
      label: step.entryLabel,
    });
    if (line.closed.length > this.tradeMemory) line.closed.splice(0, line.closed.length - this.tradeMemory);
  }
}
