/**
 * Server-sent events: frames as EventSource reads them (a payload's line breaks never end an event early),
 * and the server's stream: the snapshots at once, then each journal entry as it is written, followed by
 * one snapshot for a burst.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/engine/log.ts';
import { startDashboard, type Dashboard } from '../../../src/ops/dashboard/dashboard-server.ts';
import { parseSse, sseFrame } from '../../../src/ops/dashboard/sse.ts';
import { fixtureFeed } from './fixture-feed.ts';

describe('SSE frames', () => {
  it('puts each line of the data in its own data field and ends with a blank line', () => {
    expect(sseFrame('entry', 'a\nb\r\nc', 7)).toBe('id: 7\nevent: entry\ndata: a\ndata: b\ndata: c\n\n');
    expect(sseFrame('snapshot', { x: 1 })).toBe('event: snapshot\ndata: {"x":1}\n\n');
    expect(() => sseFrame('a\nb', {})).toThrow(RangeError);
  });

  it('reads back what it wrote, comments and retry lines aside', () => {
    const payload = { text: 'two\nlines', n: 3 };
    const stream = `retry: 2000\n\n: keepalive\n\n${sseFrame('entry', payload, 4)}${sseFrame('snapshot', 'x')}`;
    expect(parseSse(stream)).toEqual([
      { event: 'entry', data: JSON.stringify(payload), id: '4' },
      { event: 'snapshot', data: 'x' },
    ]);
  });
});

let dashboard: Dashboard | undefined;
afterEach(async () => {
  await dashboard?.close();
});

/** Reads the event stream over a real socket until `until` says enough (or the deadline). */
function readEvents(
  url: string,
  token: string,
  until: (events: ReturnType<typeof parseSse>) => boolean,
  onOpen: () => void = () => {},
): Promise<ReturnType<typeof parseSse>> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no such events in time; got ${text}`));
    }, 5_000);
    const req = request(`${url}/api/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('text/event-stream');
      res.setEncoding('utf8');
      let opened = false;
      res.on('data', (chunk: string) => {
        text += chunk;
        const events = parseSse(text);
        if (!opened && events.length > 0) {
          opened = true;
          onOpen();
        }
        if (until(events)) {
          clearTimeout(timer);
          req.destroy();
          resolve(events);
        }
      });
    });
    // After destroy() the request may report its own end as an error; the promise is settled by then.
    req.on('error', reject);
    req.end();
  });
}

describe('the event stream', () => {
  it('sends the snapshots first, then every journal entry at once and one snapshot after a burst', async () => {
    const feed = fixtureFeed('1', '2');
    dashboard = await startDashboard({ feed, logger: silentLogger, coalesceMs: 30, refreshMs: 60_000 });
    const one = feed.accountsById.get('1')!;
    const events = await readEvents(
      dashboard.origin,
      dashboard.token,
      (e) => e.filter((x) => x.event === 'snapshot').length >= 3,
      () => {
        one.current = { ...one.current, balance: 1234.5 };
        for (let k = 0; k < 5; k++) one.write('fill', { k, note: 'multi\nline' });
      },
    );
    expect(events.slice(0, 2).map((e) => [e.event, JSON.parse(e.data).id])).toEqual([
      ['snapshot', '1'],
      ['snapshot', '2'],
    ]);
    const entries = events.filter((e) => e.event === 'entry').map((e) => JSON.parse(e.data));
    expect(entries.map((e) => [e.account, e.entry.seq, e.entry.payload.k])).toEqual([
      ['1', 1, 0],
      ['1', 2, 1],
      ['1', 3, 2],
      ['1', 4, 3],
      ['1', 5, 4],
    ]);
    expect(entries[0].entry.payload.note).toBe('multi\nline');
    expect(events.filter((e) => e.event === 'entry').map((e) => e.id)).toEqual(['1', '2', '3', '4', '5']);
    // Five entries, one snapshot after them (coalesced), with the account's new figures.
    const after = events.slice(events.findIndex((e) => e.event === 'entry'));
    const snapshots = after.filter((e) => e.event === 'snapshot').map((e) => JSON.parse(e.data));
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]).toMatchObject({ id: '1', balance: 1234.5 });
  });

  it('never sends a registered secret that a journal entry holds', async () => {
    const feed = fixtureFeed('1');
    dashboard = await startDashboard({ feed, logger: silentLogger, coalesceMs: 30, refreshMs: 60_000 });
    const token = dashboard.token;
    const events = await readEvents(
      dashboard.origin,
      token,
      (e) => e.some((x) => x.event === 'entry'),
      () => feed.accountsById.get('1')!.write('request', { echoed: `token ${token}` }),
    );
    const entry = events.find((e) => e.event === 'entry')!;
    expect(entry.data).not.toContain(token);
    expect(entry.data).toContain('[redacted]');
  });
});
