/**
 * Server-sent events as the browser's EventSource reads them (HTML Living Standard, 9.2): `event:` names
 * the listener, each line of the data gets its own `data:` field (a payload's newlines must not end the
 * event early), `id:` lets a reconnecting browser say what it saw last, and a blank line ends the event.
 */
export function sseFrame(event: string, data: unknown, id?: number): string {
  if (/[\r\n]/.test(event)) throw new RangeError('an SSE event name cannot hold a line break');
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const lines = text.split(/\r\n|\r|\n/);
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\n${lines.map((l) => `data: ${l}`).join('\n')}\n\n`;
}

/** A comment line: keeps proxies and phones from closing a quiet stream, ignored by EventSource. */
export const SSE_KEEPALIVE = ': keepalive\n\n';

/** Parses frames back (tests and the bench read the stream as a browser would). */
export function parseSse(text: string): { event: string; data: string; id?: string }[] {
  const out: { event: string; data: string; id?: string }[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (data.length === 0) continue;
    out.push({ event, data: data.join('\n'), ...(id === undefined ? {} : { id }) });
  }
  return out;
}
