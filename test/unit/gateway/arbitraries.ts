/** fast-check generators of wire records in the spec's shapes. */
import fc from 'fast-check';

const MIN = Date.parse('2000-01-01T00:00:00Z');
const MAX = Date.parse('2040-01-01T00:00:00Z');

/** ISO 8601 with an offset in the forms servers send: `Z`, `+00:00`, 0 to 7 fractional digits, other offsets. */
export const isoDateTime = fc
  .tuple(
    fc.integer({ min: MIN, max: MAX }),
    fc.integer({ min: 0, max: 7 }),
    fc.constantFrom('Z', '+00:00', '-05:00', '+09:30'),
    fc.integer({ min: 0, max: 9_999_999 }),
  )
  .map(([ms, digits, offset, fraction]) => {
    const shift =
      offset === 'Z' || offset === '+00:00'
        ? 0
        : (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4))) * 60_000;
    const base = new Date(Math.floor(ms / 1000) * 1000 + shift).toISOString().slice(0, 19);
    const frac = digits === 0 ? '' : `.${String(fraction).padStart(7, '0').slice(0, digits)}`;
    return `${base}${frac}${offset}`;
  });

/** Decimals as they arrive: up to 9 places. */
export const decimal = fc
  .integer({ min: -10_000_000_000, max: 10_000_000_000 })
  .chain((n) => fc.integer({ min: 0, max: 9 }).map((places) => Number((n / 10 ** places).toFixed(places))));
export const positiveDecimal = fc.integer({ min: 1, max: 1_000_000 }).map((n) => n / 100);
export const int = fc.integer({ min: -1_000_000, max: 1_000_000 });
export const id = fc.integer({ min: 1, max: 2_000_000_000 });

export const bar = fc.record({ t: isoDateTime, o: decimal, h: decimal, l: decimal, c: decimal, v: fc.nat() });

export const contract = fc.record({
  id: fc.string({ minLength: 1 }),
  name: fc.string(),
  description: fc.string(),
  tickSize: positiveDecimal,
  tickValue: positiveDecimal,
  activeContract: fc.boolean(),
  symbolId: fc.string(),
});

export const order = fc.record(
  {
    id,
    accountId: id,
    contractId: fc.string(),
    symbolId: fc.string(),
    creationTimestamp: isoDateTime,
    updateTimestamp: isoDateTime,
    status: fc.integer({ min: 0, max: 8 }),
    type: fc.integer({ min: 0, max: 7 }),
    side: fc.integer({ min: 0, max: 1 }),
    size: fc.integer({ min: 1, max: 100 }),
    limitPrice: fc.option(decimal, { nil: null }),
    stopPrice: fc.option(decimal, { nil: null }),
    fillVolume: fc.nat(),
    filledPrice: fc.option(decimal, { nil: null }),
    customTag: fc.option(fc.string(), { nil: null }),
  },
  {
    requiredKeys: [
      'id',
      'accountId',
      'contractId',
      'creationTimestamp',
      'updateTimestamp',
      'status',
      'type',
      'side',
      'size',
      'limitPrice',
      'stopPrice',
      'filledPrice',
    ],
  },
);

export const trade = fc.record({
  id,
  accountId: id,
  contractId: fc.string(),
  creationTimestamp: isoDateTime,
  price: decimal,
  profitAndLoss: fc.option(decimal, { nil: null }),
  fees: decimal,
  side: fc.integer({ min: 0, max: 1 }),
  size: fc.integer({ min: 1, max: 100 }),
  voided: fc.boolean(),
  orderId: id,
});
