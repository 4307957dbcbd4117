import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { PostgresDb } from '../../db/database.js';
import { translateStoreError } from '../../db/translate-error.js';
import type { Worker } from '../../lib/lifecycle.js';
import type { Logger } from '../../lib/logger.js';

/**
 * Hints that cross processes: "this agent's control state changed", "close these streams".
 * They carry no state: a receiver reads the committed state itself, so hints that arrive late,
 * twice or out of order still leave every stream at the latest state.
 */
export type ControlMessage =
  | { readonly kind: 'agent_changed'; readonly orgId: string; readonly agentId: string }
  | { readonly kind: 'agent_deleted'; readonly orgId: string; readonly agentId: string }
  | { readonly kind: 'key_revoked'; readonly orgId: string; readonly keyId: string }
  /** Telemetry of the agent was committed: dashboard streams tell their pages to read it. */
  | { readonly kind: 'events_stored'; readonly orgId: string; readonly agentId: string };

/**
 * A worker: the PostgreSQL bus holds a listening connection from the first stream until the
 * process stops. Errors (a lost connection, a handler that throws) are logged, never thrown to
 * the publisher.
 */
export interface ControlBus extends Worker {
  readonly transport: 'memory' | 'postgres';
  /** Delivers to this process at once and to the others through the store; never throws. */
  publish(message: ControlMessage): void;
  subscribe(handler: (message: ControlMessage) => void): void;
  /** Resolves once other processes' messages reach this one; streams wait for it before `init`. */
  ready(): Promise<void>;
  /** After a lost connection is back: messages may have been missed, so state must be re-read. */
  onResync(handler: () => void): void;
}

function createHandlers(log: Logger) {
  const handlers: Array<(m: ControlMessage) => void> = [];
  const resyncs: Array<() => void> = [];
  const deliver = (message: ControlMessage) => {
    for (const handler of handlers) {
      try {
        handler(message);
      } catch (err) {
        log.error({ err, message }, 'a control bus handler failed');
      }
    }
  };
  return { handlers, resyncs, deliver };
}

/** The embedded shape: one process, so a message only has to reach this process's streams. */
export function createMemoryControlBus(log: Logger): ControlBus {
  const h = createHandlers(log);
  return {
    name: 'control-bus',
    kind: 'resource',
    transport: 'memory',
    start: () => Promise.resolve(),
    publish: (message) => h.deliver(message),
    subscribe: (handler) => void h.handlers.push(handler),
    ready: () => Promise.resolve(),
    onResync: (handler) => void h.resyncs.push(handler),
    stop: () => Promise.resolve(),
  };
}

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/**
 * LISTEN/NOTIFY on the shared PostgreSQL. One dedicated connection listens (started by the first
 * stream, not at boot, so processes without streams hold none); NOTIFY goes through the pool.
 * The channel is per schema, because notifications are per database and several deployments
 * (or test runs) may share one database in different schemas. A process ignores its own
 * notifications: it has already delivered them locally.
 */
export function createPostgresControlBus({ pool }: Pick<PostgresDb, 'pool'>, log: Logger): ControlBus {
  const h = createHandlers(log);
  const error = (err: unknown, msg: string) => log.warn({ err: translateStoreError('postgres', err) }, msg);
  const origin = randomUUID();
  let channelOf: Promise<string> | undefined;
  let listening: Promise<void> | undefined;
  let client: pg.Client | undefined;
  let isStopped = false;
  let reconnectDelay = RECONNECT_MIN_MS;
  let reconnectTimer: NodeJS.Timeout | undefined;

  function channel(): Promise<string> {
    channelOf ??= pool.query<{ s: string }>('SELECT current_schema() AS s').then(
      ({ rows }) => {
        const schema = rows[0]?.s ?? 'public';
        return schema === 'public' ? 'corral_control' : `corral_control_${createHash('md5').update(schema).digest('hex').slice(0, 16)}`;
      },
      (err: unknown) => {
        channelOf = undefined;
        throw err;
      },
    );
    return channelOf;
  }

  function onNotification(name: string, n: pg.Notification): void {
    if (n.channel !== name || !n.payload) return;
    let parsed: ControlMessage & { origin?: string };
    try {
      parsed = JSON.parse(n.payload) as ControlMessage & { origin?: string };
    } catch (err) {
      error(err, 'unreadable control bus notification');
      return;
    }
    if (parsed.origin === origin) return;
    const { origin: _from, ...message } = parsed;
    h.deliver(message);
  }

  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = undefined;
    listening = undefined;
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (isStopped || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      listen().then(
        () => {
          reconnectDelay = RECONNECT_MIN_MS;
          for (const resync of h.resyncs) resync();
        },
        (err: unknown) => {
          error(err, 'control bus reconnect failed; retrying');
          reconnectDelay = Math.min(reconnectDelay * 2, RECONNECT_MAX_MS);
          scheduleReconnect();
        },
      );
    }, reconnectDelay);
    reconnectTimer.unref();
  }

  async function connect(): Promise<void> {
    const name = await channel();
    const c = new pg.Client(pool.options);
    c.on('error', (err) => {
      error(err, 'control bus connection lost; reconnecting');
      lost(c);
    });
    c.on('end', () => lost(c));
    c.on('notification', (n) => onNotification(name, n));
    client = c;
    await c.connect();
    await c.query(`LISTEN "${name}"`);
  }

  function listen(): Promise<void> {
    if (isStopped) return Promise.reject(new Error('control bus stopped'));
    listening ??= connect().catch((err: unknown) => {
      const c = client;
      client = undefined;
      listening = undefined;
      void c?.end().catch(() => undefined);
      throw err;
    });
    return listening;
  }

  return {
    name: 'control-bus',
    kind: 'resource',
    transport: 'postgres',
    // The listening connection opens with the first stream, so processes without streams hold none.
    start: () => Promise.resolve(),
    publish(message) {
      h.deliver(message);
      channel()
        .then((name) => pool.query('SELECT pg_notify($1, $2)', [name, JSON.stringify({ ...message, origin })]))
        .catch((err: unknown) => error(err, 'control bus notify failed; other processes see the change on their next read'));
    },
    subscribe: (handler) => void h.handlers.push(handler),
    ready: () => listen().catch((err: unknown) => {
      throw translateStoreError('postgres', err);
    }),
    onResync: (handler) => void h.resyncs.push(handler),
    async stop() {
      isStopped = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const c = client;
      client = undefined;
      listening = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
