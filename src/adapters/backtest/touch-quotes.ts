/**
 * The backtest's quotes when it fills at the touch (`fills.spread` set): the same book as the simulator
 * (src/market/quotes.ts) computed from the bars as they pass. A bar's quote takes its spread and level
 * size from the bar before; its open sits on the ask after an up move and on the bid after a down move,
 * the last move being the jump from the previous close or, without one, the last change of the path
 * before it (src/market/path.ts). The simulator reads the same from its price path, so both quote a bar's
 * open alike.
 */
import { lastMove } from '../../market/path.ts';
import {
  quoteAround,
  levelSize,
  spreadTicks,
  type BarFacts,
  type Quote,
  type TouchFills,
} from '../../market/quotes.ts';

interface ContractState {
  /** The bar before the current one. */
  previous: BarFacts & { readonly close: number };
  /** The direction of the last price change seen (the tick rule); up before any. */
  direction: 1 | -1;
}

export class TouchQuotes {
  private readonly byContract = new Map<string, ContractState>();
  private previous: BarFacts = { high: 0, low: 0, volume: 0 };
  private current: BarFacts = { high: 0, low: 0, volume: 0 };
  private openDirection: 1 | -1 = 1;

  constructor(readonly fills: TouchFills) {}

  /** A bar of `contractId` opens: its quote is fixed from what came before it. */
  begin(contractId: string, open: number, high: number, low: number, volume: number): void {
    const state = this.byContract.get(contractId);
    this.current = { high, low, volume };
    if (state === undefined) {
      this.previous = this.current;
      this.openDirection = 1;
      return;
    }
    this.previous = state.previous;
    this.openDirection = open === state.previous.close ? state.direction : open > state.previous.close ? 1 : -1;
  }

  /** The bar has been matched: it becomes the bar before the next one. */
  end(contractId: string, open: number, high: number, low: number, close: number, volume: number): void {
    const move = lastMove(open, high, low, close);
    const direction = move === 0 ? this.openDirection : move;
    const state = this.byContract.get(contractId);
    const previous = { high, low, volume, close };
    if (state === undefined) this.byContract.set(contractId, { previous, direction });
    else {
      state.previous = previous;
      state.direction = direction;
    }
  }

  /** The quote at the current bar's open. */
  atOpen(open: number): Quote {
    return this.at(open, this.openDirection);
  }

  /** The quote when the current bar trades at `price` moving in `direction` (a stop triggered inside the bar). */
  at(price: number, direction: number): Quote {
    return quoteAround(
      price,
      direction,
      spreadTicks(this.fills.spread, this.previous),
      levelSize(this.fills.book, this.previous),
    );
  }

  /** The current bar's range and volume, and the bar before (what a touch fill works with). */
  bars(): { bar: BarFacts; previous: BarFacts } {
    return { bar: this.current, previous: this.previous };
  }
}
