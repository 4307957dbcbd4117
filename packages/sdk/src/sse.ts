import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** A small Server-Sent Events parser (the WHATWG event-stream format), fed text chunks. */
export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export interface SseParser {
  push(chunk: string): void;
  /** The last `retry:` value seen, in milliseconds. */
  retry(): number | undefined;
}

/** `maxLine` bounds what one unterminated line may hold, so a hostile stream cannot grow memory. */
export function createSseParser(onEvent: (e: SseEvent) => void, maxLine = 1 << 20): SseParser {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let retry: number | undefined;
  const dispatch = () => {
    if (data.length > 0) onEvent({ event: event || 'message', data: data.join('\n'), id });
    event = '';
    data = [];
  };
  const line = (text: string) => {
    if (text === '') return dispatch();
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
  };
  return {
    push(chunk) {
      buffer += chunk;
      let at: number;
      while ((at = buffer.search(/\r\n|\r|\n/)) !== -1) {
        // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
        if (buffer[at] === '\r' && at === buffer.length - 1) break;
        const newline = buffer[at] === '\r' && buffer[at + 1] === '\n' ? 2 : 1;
        line(buffer.slice(0, at));
        buffer = buffer.slice(at + newline);
      }
      if (buffer.length > maxLine) throw new Error('event-stream line too long');
    },
    retry: () => retry,
  };
}

/**
 * Opens an event stream on a connection of its own that holds no reference on the event loop:
 * an agent's script ends when its own work ends, whether or not it closed the SDK (a `fetch`
 * body would keep the process alive for as long as the stream lasts).
 */
export function openEventStream(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(target, { headers: { ...headers, accept: 'text/event-stream' }, agent: false, signal }, resolve);
    req.on('socket', (socket) => socket.unref());
    req.on('error', reject);
    req.end();
  });
}
