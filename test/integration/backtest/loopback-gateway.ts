/**
 * A loopback gateway for the backtest's tests: answers login and retrieveBars (newest first, at most
 * `limit` bars, one a minute except on Saturdays, prices on a 0.25 grid) and counts bar requests.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const MINUTE = 60_000;

export function barAt(t: number) {
  const base = 4000 + ((t / MINUTE) % 97) * 0.25;
  return {
    t: new Date(t).toISOString(),
    o: base,
    h: base + 0.5,
    l: base - 0.25,
    c: base + 0.25,
    v: 1 + ((t / MINUTE) % 7),
  };
}

export interface LoopbackGateway {
  readonly baseUrl: string;
  /** Bar requests received so far. */
  barRequests(): number;
  /** The contract id of every bar request, in order. */
  requestedContracts(): readonly string[];
  /** Answer every bar request with no bars (true) or with the usual ones (false). */
  answerEmpty(empty: boolean): void;
  close(): Promise<void>;
}

export async function startLoopbackGateway(): Promise<LoopbackGateway> {
  let barRequests = 0;
  const contracts: string[] = [];
  let empty = false;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/Auth/loginKey') {
        res.end(JSON.stringify({ token: 'test-token', success: true, errorCode: 0, errorMessage: null }));
        return;
      }
      if (req.url === '/api/History/retrieveBars') {
        barRequests++;
        const q = JSON.parse(body) as { contractId: string; startTime: string; endTime: string; limit: number };
        contracts.push(q.contractId);
        const bars = [];
        const from = Math.ceil(Date.parse(q.startTime) / MINUTE) * MINUTE;
        for (let t = from; !empty && t <= Date.parse(q.endTime) && bars.length < q.limit; t += MINUTE) {
          if (new Date(t).getUTCDay() !== 6) bars.push(barAt(t));
        }
        res.end(JSON.stringify({ bars: bars.reverse(), success: true, errorCode: 0, errorMessage: null }));
        return;
      }
      res.statusCode = 404;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    barRequests: () => barRequests,
    requestedContracts: () => contracts,
    answerEmpty: (value) => {
      empty = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
