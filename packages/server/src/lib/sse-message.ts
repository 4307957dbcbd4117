/**
 * The text of one server-sent event. Features format a message once and hand the bytes to any
 * number of streams (http/sse.ts writes them).
 */
export interface SseMessage {
  readonly event: string;
  readonly data: unknown;
  readonly id?: string;
}

const lineBreak = /[\r\n]/;

/** One `event:`/`id:`/`data:` block. Newlines in `event` or `id` would forge fields, so they throw. */
export function formatEvent({ event, data, id }: SseMessage): string {
  if (event.length === 0 || lineBreak.test(event)) throw new Error('SSE event names must be one non-empty line');
  if (id !== undefined && (lineBreak.test(id) || id.includes('\0'))) throw new Error('SSE ids must be one line without NUL');
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const lines = text.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join('');
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\n${lines}\n`;
}

/** formatEvent as bytes: a message for many streams is encoded once and the buffer shared. */
export const encodeEvent = (message: SseMessage): Buffer => Buffer.from(formatEvent(message), 'utf8');

/**
 * An open event stream to one client, as features see it. `key` names what a message is about:
 * while the client is slow, a later message with the same key replaces a waiting one.
 */
export interface EventStream {
  readonly closed: boolean;
  /** Bytes waiting in the socket's user-space buffer, and messages waiting behind it. */
  readonly buffered: { bytes: number; messages: number };
  /** Called once, however the stream ends (client gone, close(), shutdown). */
  onClosed: (() => void) | undefined;
  send(message: SseMessage): void;
  sendFormatted(key: string, message: string | Buffer): void;
  /** Starts delivery after a hold: what arrived meanwhile follows the first message. */
  release(): void;
  /** Writes the heartbeat comment, or counts a stall; a client stalled too long is cut off. */
  heartbeat(): void;
  /** Ends the stream cleanly: the client sees end of stream. */
  close(): void;
}
