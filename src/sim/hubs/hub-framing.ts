/**
 * The SignalR JSON hub protocol, server side (what ASP.NET Core speaks to `@microsoft/signalr`): records
 * are JSON texts ended by the 0x1E character; a connection opens with a handshake request
 * (`{"protocol":"json","version":1}`) answered by `{}` or `{"error": …}`; then invocations (1), stream
 * items (2), completions (3), stream invocations (4), cancels (5), pings (6) and close (7).
 */
import { TicklineError } from '../../engine/errors.ts';

export const RECORD_SEPARATOR = '\u001e';

export const MessageType = {
  Invocation: 1,
  StreamItem: 2,
  Completion: 3,
  StreamInvocation: 4,
  CancelInvocation: 5,
  Ping: 6,
  Close: 7,
} as const;

export interface Invocation {
  readonly type: typeof MessageType.Invocation;
  readonly invocationId?: string;
  readonly target: string;
  readonly arguments: readonly unknown[];
}

export type HubMessage =
  | Invocation
  | {
      readonly type: typeof MessageType.Completion;
      readonly invocationId: string;
      readonly result?: unknown;
      readonly error?: string;
    }
  | { readonly type: typeof MessageType.Ping }
  | { readonly type: typeof MessageType.Close; readonly error?: string; readonly allowReconnect?: boolean }
  | {
      readonly type:
        | typeof MessageType.StreamItem
        | typeof MessageType.StreamInvocation
        | typeof MessageType.CancelInvocation;
      readonly invocationId?: string;
    };

export class HubProtocolError extends TicklineError {
  override readonly name = 'HubProtocolError';
  readonly kind = 'input';
  readonly code = 'HUB_PROTOCOL';
}

/** Splits a text frame into its records; a frame must end with the separator. */
export function splitRecords(frame: string): string[] {
  if (!frame.endsWith(RECORD_SEPARATOR))
    throw new HubProtocolError('a hub message must end with the record separator 0x1E');
  return frame.slice(0, -1).split(RECORD_SEPARATOR);
}

export function encode(message: object): string {
  return `${JSON.stringify(message)}${RECORD_SEPARATOR}`;
}

/** The handshake request's answer: an error text, or undefined when the protocol is one this side speaks. */
export function handshakeError(record: string): string | undefined {
  let request: unknown;
  try {
    request = JSON.parse(record);
  } catch {
    return 'Handshake request is not JSON.';
  }
  const { protocol, version } = (request ?? {}) as { protocol?: unknown; version?: unknown };
  if (protocol !== 'json') return `The protocol '${String(protocol)}' is not supported.`;
  if (version !== 1) return `The server does not support version ${String(version)} of the 'json' protocol.`;
  return undefined;
}

/** One record after the handshake, checked for the fields its type needs. */
export function parseMessage(record: string): HubMessage {
  let message: unknown;
  try {
    message = JSON.parse(record);
  } catch {
    throw new HubProtocolError('a hub message is not JSON');
  }
  if (typeof message !== 'object' || message === null) throw new HubProtocolError('a hub message must be an object');
  const type = (message as { type?: unknown }).type;
  if (type === MessageType.Invocation) {
    const {
      target,
      arguments: args,
      invocationId,
    } = message as { target?: unknown; arguments?: unknown; invocationId?: unknown };
    if (typeof target !== 'string' || !Array.isArray(args))
      throw new HubProtocolError('an invocation needs a target and arguments');
    if (invocationId !== undefined && typeof invocationId !== 'string')
      throw new HubProtocolError('invocationId must be a string');
    return invocationId === undefined
      ? { type, target, arguments: args }
      : { type, target, arguments: args, invocationId };
  }
  if (typeof type !== 'number' || type < MessageType.Invocation || type > MessageType.Close)
    throw new HubProtocolError(`unknown hub message type ${String(type)}`);
  return message as HubMessage;
}
