/**
 * Properties of the wire schemas as the client uses them: generated valid records parse; a record with
 * one required field removed or of the wrong type fails, and the error names the endpoint, the field
 * path and the value received. Extra fields are tolerated.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { z } from 'zod';
import {
  BarsResponse,
  ContractsResponse,
  GatewayError,
  OrdersResponse,
  TradesResponse,
  parseResponse,
} from '../../../src/adapters/gateway/index.ts';
import * as A from '../gateway/arbitraries.ts';

const ok = { success: true, errorCode: 0, errorMessage: null };

interface Case {
  name: string;
  schema: z.ZodType;
  list: string;
  record: fc.Arbitrary<Record<string, unknown>>;
  required: string[];
}

const cases: Case[] = [
  {
    name: 'History/retrieveBars',
    schema: BarsResponse,
    list: 'bars',
    record: A.bar,
    required: ['t', 'o', 'h', 'l', 'c', 'v'],
  },
  {
    name: 'Contract/search',
    schema: ContractsResponse,
    list: 'contracts',
    record: A.contract,
    required: ['id', 'name', 'description', 'tickSize', 'tickValue', 'activeContract', 'symbolId'],
  },
  {
    name: 'Order/search',
    schema: OrdersResponse,
    list: 'orders',
    record: A.order,
    required: [
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
  {
    name: 'Trade/search',
    schema: TradesResponse,
    list: 'trades',
    record: A.trade,
    required: [
      'id',
      'accountId',
      'contractId',
      'creationTimestamp',
      'price',
      'profitAndLoss',
      'fees',
      'side',
      'size',
      'voided',
      'orderId',
    ],
  },
];

/** A value no field of these records accepts, of a type other than the original's. */
function wrongTypeFor(value: unknown): unknown {
  if (typeof value === 'string') return 12.5;
  if (typeof value === 'number') return `${value}`;
  if (typeof value === 'boolean') return 'yes';
  return { nested: true };
}

describe.each(cases)('$name', ({ name, schema, list, record, required }) => {
  it('parses generated valid records, extra fields tolerated', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 5 }), fc.string(), (records, extra) => {
        const body = { ...ok, [list]: records.map((r) => ({ ...r, someNewField: extra })), serverVersion: 'x' };
        const parsed = parseResponse(schema, name, body) as Record<string, unknown[]>;
        expect(parsed[list]).toEqual(records);
      }),
      { numRuns: 60 },
    );
  });

  it('fails on a missing or ill-typed required field, naming the path and the value received', () => {
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.constantFrom(...required),
        fc.boolean(),
        (records, pick, field, remove) => {
          const index = pick % records.length;
          const corrupt = { ...records[index] };
          const received = remove ? undefined : wrongTypeFor(corrupt[field]);
          if (remove) delete corrupt[field];
          else corrupt[field] = received;
          const body = { ...ok, [list]: records.map((r, i) => (i === index ? corrupt : r)) };
          let error: unknown;
          try {
            parseResponse(schema, name, body);
          } catch (e) {
            error = e;
          }
          expect(error).toBeInstanceOf(GatewayError);
          const g = error as GatewayError;
          expect(g.code).toBe('MALFORMED_RESPONSE');
          expect(g.endpoint).toBe(name);
          const path = `${list}.${index}.${field}`;
          expect(g.issues).toContainEqual(expect.objectContaining({ path, received }));
          expect(g.message).toContain(name);
          expect(g.message).toContain(path);
        },
      ),
      { numRuns: 120 },
    );
  });
});

describe('datetimes', () => {
  it('accepts every offset form servers send', () => {
    fc.assert(
      fc.property(A.isoDateTime, (t) => {
        expect(() =>
          parseResponse(BarsResponse, 'History/retrieveBars', { ...ok, bars: [{ t, o: 1, h: 1, l: 1, c: 1, v: 1 }] }),
        ).not.toThrow();
      }),
    );
  });

  it('refuses a datetime without an offset', () => {
    expect(() =>
      parseResponse(BarsResponse, 'History/retrieveBars', {
        ...ok,
        bars: [{ t: '2025-07-18T21:00:00', o: 1, h: 1, l: 1, c: 1, v: 1 }],
      }),
    ).toThrow(/bars\.0\.t/);
  });
});
