import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encode,
  handshakeError,
  HubProtocolError,
  MessageType,
  parseMessage,
  RECORD_SEPARATOR,
  splitRecords,
} from '../../../src/sim/hubs/hub-framing.ts';

describe('SignalR JSON hub protocol', () => {
  it('records are JSON ended by 0x1E; a frame holds several; encoding and splitting round-trip', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { minLength: 1, maxLength: 5 }), (messages) => {
        const frame = messages.map(encode).join('');
        expect(splitRecords(frame).map((r) => JSON.parse(r))).toEqual(JSON.parse(JSON.stringify(messages)));
      }),
    );
    expect(() => splitRecords('{"type":6}')).toThrow(HubProtocolError);
  });

  it('the handshake takes json version 1 only', () => {
    expect(handshakeError('{"protocol":"json","version":1}')).toBeUndefined();
    expect(handshakeError('{"protocol":"messagepack","version":1}')).toBe(
      "The protocol 'messagepack' is not supported.",
    );
    expect(handshakeError('{"protocol":"json","version":2}')).toMatch(/version 2/);
    expect(handshakeError('not json')).toMatch(/not JSON/);
  });

  it('messages: an invocation needs a target and arguments; unknown types are errors', () => {
    expect(parseMessage('{"type":1,"target":"SubscribeOrders","arguments":[7],"invocationId":"0"}')).toEqual({
      type: MessageType.Invocation,
      target: 'SubscribeOrders',
      arguments: [7],
      invocationId: '0',
    });
    expect(parseMessage('{"type":6}')).toEqual({ type: MessageType.Ping });
    expect(() => parseMessage('{"type":1,"arguments":[]}')).toThrow(/target/);
    expect(() => parseMessage('{"type":1,"target":"X","arguments":[],"invocationId":3}')).toThrow(/invocationId/);
    expect(() => parseMessage('{"type":42}')).toThrow(/unknown hub message type 42/);
    expect(() => parseMessage('[1]')).toThrow(HubProtocolError);
    expect(encode({ type: 6 })).toBe(`{"type":6}${RECORD_SEPARATOR}`);
  });
});

describe('SignalR JSON hub protocol, any input', () => {
  it('a record that is not a valid message is a HubProtocolError, never another exception', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify({ type: 1, target: v, arguments: v })),
        ),
        (record) => {
          try {
            parseMessage(record);
          } catch (error) {
            expect(error).toBeInstanceOf(HubProtocolError);
          }
        },
      ),
    );
  });
});
