/** Standard output and error of in-process command runs, captured afresh for each test of the file. */
import { afterEach, beforeEach, vi } from 'vitest';

export function captureOutput(): { readonly out: string[]; readonly err: string[] } {
  const captured = { out: [] as string[], err: [] as string[] };
  beforeEach(() => {
    captured.out.length = 0;
    captured.err.length = 0;
    vi.spyOn(process.stdout, 'write').mockImplementation(
      (chunk: string | Uint8Array) => (captured.out.push(String(chunk)), true),
    );
    vi.spyOn(process.stderr, 'write').mockImplementation(
      (chunk: string | Uint8Array) => (captured.err.push(String(chunk)), true),
    );
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  return captured;
}
