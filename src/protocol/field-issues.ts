/**
 * A schema mismatch as field issues: the path, zod's message and the value received there. The client
 * reports a malformed response with them and the simulator a malformed request, in the same words.
 */
import type { z } from 'zod';

export interface FieldIssue {
  path: string;
  message: string;
  received: unknown;
}

export function describeIssues(error: z.ZodError, input: unknown): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.'),
    message: issue.message,
    received: valueAt(input, issue.path),
  }));
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}
