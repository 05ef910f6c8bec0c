/**
 * Full column blocks parked in a temporary file (`BlockSpill`, src/engine/column-blocks.ts): a streamed run
 * of tens of millions of bars keeps its orders, fills and trades there instead of in memory, and reads
 * them back when its result files are written. The file is removed as soon as it is open (where the
 * system allows: the open descriptor keeps it readable), so nothing is left behind when the process ends,
 * however it ends; the descriptor is closed when the spill is no longer reachable.
 *
 * A block is its numbers as bytes, then its references as one JSON array (strings, null, order specs),
 * written and read by JSON's own code, without a replacer or reviver (those made a block's round trip
 * 1.9 ms). What JSON has no text for is marked: an undefined reference is written as 0 (no reference is a
 * number), and a spec with a price that is not finite or is -0 as a one-key object holding its exact text
 * (a key of a spec whose value is undefined is left out, as JSON leaves it out).
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BlockSpill } from '../../engine/column-blocks.ts';
import { TicklineError } from '../../engine/errors.ts';

/** The temporary file could not be made, written (a full disk) or read back. */
export class ColumnSpillError extends TicklineError {
  override readonly name = 'ColumnSpillError';
  readonly kind = 'runtime';
  readonly code = 'COLUMN_SPILL';
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const closer = new FinalizationRegistry<{ fd: number; dir: string | undefined }>((held) => {
  closeSync(held.fd);
  if (held.dir !== undefined) rmSync(held.dir, { recursive: true, force: true });
});

export class FileSpill implements BlockSpill {
  private descriptor = -1;
  private size = 0;
  private readonly length = Buffer.alloc(4);

  /** `tmp`: the folder the file goes in (the system's temporary folder by default); made at the first block. */
  constructor(private readonly tmp: string = os.tmpdir()) {}

  private get fd(): number {
    if (this.descriptor < 0) this.open();
    return this.descriptor;
  }

  private open(): void {
    let dir: string;
    try {
      dir = mkdtempSync(path.join(this.tmp, 'tickline-columns-'));
      this.descriptor = openSync(path.join(dir, 'blocks'), 'w+');
    } catch (error) {
      throw new ColumnSpillError(
        `cannot make the temporary file for the run's orders, fills and trades in ${this.tmp} (set TMPDIR to another folder): ${reason(error)}`,
        { cause: error },
      );
    }
    let left: string | undefined;
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // A system that cannot remove an open file: it goes when the spill is let go.
      left = dir;
    }
    closer.register(this, { fd: this.descriptor, dir: left });
  }

  park(numbers: Float64Array, refs: readonly unknown[]): number {
    const ticket = this.size;
    const text = Buffer.from(JSON.stringify(refs.map(toJson)));
    this.length.writeUInt32LE(text.length, 0);
    this.write(new Uint8Array(numbers.buffer, numbers.byteOffset, numbers.byteLength));
    this.write(this.length);
    this.write(text);
    return ticket;
  }

  fetch(ticket: number, numbers: Float64Array): unknown[] {
    const bytes = new Uint8Array(numbers.buffer, numbers.byteOffset, numbers.byteLength);
    this.read(bytes, ticket);
    this.read(this.length, ticket + bytes.length);
    const text = Buffer.alloc(this.length.readUInt32LE(0));
    this.read(text, ticket + bytes.length + 4);
    const refs = JSON.parse(text.toString('utf8')) as unknown[];
    for (let k = 0; k < refs.length; k++) {
      const ref = refs[k];
      if (ref === 0) refs[k] = undefined;
      else if (typeof ref === 'object' && ref !== null && EXACT in ref)
        refs[k] = JSON.parse((ref as Record<string, string>)[EXACT]!, fromJson);
    }
    return refs;
  }

  private write(bytes: Uint8Array): void {
    const fd = this.fd;
    let done = 0;
    try {
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, this.size + done);
    } catch (error) {
      throw new ColumnSpillError(
        `cannot write the run's orders, fills and trades to their temporary file in ${this.tmp} (set TMPDIR to a folder with room): ${reason(error)}`,
        { cause: error },
      );
    }
    this.size += bytes.length;
  }

  private read(into: Uint8Array, at: number): void {
    let done = 0;
    while (done < into.length) {
      const got = readSync(this.fd, into, done, into.length - done, at + done);
      if (got === 0) throw new ColumnSpillError(`the column spill file ends inside the block at byte ${at}`);
      done += got;
    }
  }
}

/** The key of a reference written with its exact numbers (`toJson`). */
const EXACT = '~exact';
const NUMBER = '~number';

function toJson(ref: unknown): unknown {
  if (ref === undefined) return 0;
  if (typeof ref === 'object' && ref !== null && hasInexactNumber(ref))
    return { [EXACT]: JSON.stringify(ref, (_key, value: unknown) => exactNumber(value)) };
  return ref;
}

/** Whether JSON would change one of the object's numbers (-0, infinities, NaN), at any depth. */
function hasInexactNumber(value: object): boolean {
  for (const item of Object.values(value)) {
    if (typeof item === 'number' && (!Number.isFinite(item) || Object.is(item, -0))) return true;
    if (typeof item === 'object' && item !== null && hasInexactNumber(item)) return true;
  }
  return false;
}

function exactNumber(value: unknown): unknown {
  if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0)))
    return { [NUMBER]: Object.is(value, -0) ? '-0' : String(value) };
  return value;
}

function fromJson(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === NUMBER ? Number((value as Record<string, string>)[NUMBER]) : value;
}
