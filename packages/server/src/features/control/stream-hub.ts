import type { Clock } from '../../lib/clock.js';
import type { Worker } from '../../lib/lifecycle.js';
import type { EventStream } from '../../lib/sse-message.js';

/** One open control or dashboard stream. */
export interface Subscriber {
  readonly orgId: string;
  readonly agentId: string;
  /** The API key that opened it; revoking the key closes the stream. */
  readonly keyId: string | undefined;
  /** When the credential behind it (a session) expires; checked on each heartbeat. */
  readonly expiresAt: number | undefined;
  /** Dashboard streams also hear that new telemetry was stored; SDK streams never do. */
  readonly isDashboard?: boolean;
  readonly stream: EventStream;
}

interface Registered extends Subscriber {
  /** Which tick of the heartbeat cycle beats this stream. */
  readonly slot: number;
}

/** What this process last pushed to an agent's streams, so a change is pushed once. */
export interface GroupState {
  killSwitchActive: boolean;
  /** The activation sequence of the policy last pushed (0: none). */
  policySequence: number;
}

/** The streams of one agent in this process. `state` is unset until the first stream's `init`. */
export interface AgentGroup {
  readonly orgId: string;
  readonly agentId: string;
  readonly subscribers: Set<Registered>;
  state: GroupState | undefined;
  refreshing: Promise<void> | undefined;
  isDirty: boolean;
}

export interface HubStats {
  streams: number;
  agents: number;
  heartbeatTimers: number;
  bufferedBytes: number;
  pendingMessages: number;
}

export const HEARTBEAT_MS = 15_000;
/**
 * The heartbeat cycle is cut into slices and each stream is beaten in one of them: beating
 * 10,000 streams at once is 10,000 socket writes in one go, and a push arriving meanwhile
 * would wait behind all of them rather than behind one slice.
 */
const HEARTBEAT_SLICES = 15;

const groupKey = (orgId: string, agentId: string) => `${orgId}/${agentId}`;

/**
 * Every open stream of this process, by agent and by API key. One timer sends every stream's
 * heartbeat (every `heartbeatMs`, spread over the cycle); it runs only while a stream is open,
 * so an idle process holds no timer. A worker: stopping it ends every stream, and a stream
 * added afterwards is ended at once.
 */
export function createStreamHub({ clock, heartbeatMs = HEARTBEAT_MS }: { clock: Clock; heartbeatMs?: number }) {
  const groups = new Map<string, AgentGroup>();
  const byKey = new Map<string, Set<Registered>>();
  let streams = 0;
  let timer: NodeJS.Timeout | undefined;
  let tick = 0;
  let added = 0;
  let isStopped = false;

  function beat(): void {
    const slot = tick++ % HEARTBEAT_SLICES;
    const now = clock.now();
    for (const group of groups.values()) {
      for (const sub of group.subscribers) {
        if (sub.slot !== slot) continue;
        if (sub.expiresAt !== undefined && sub.expiresAt <= now) sub.stream.close();
        else sub.stream.heartbeat();
      }
    }
  }

  function remove(sub: Registered): void {
    const key = groupKey(sub.orgId, sub.agentId);
    const group = groups.get(key);
    if (!group?.subscribers.delete(sub)) return;
    streams--;
    if (group.subscribers.size === 0) groups.delete(key);
    if (sub.keyId !== undefined) {
      const forKey = byKey.get(sub.keyId);
      forKey?.delete(sub);
      if (forKey?.size === 0) byKey.delete(sub.keyId);
    }
    if (streams === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  function closeEach(subs: Iterable<Registered>): number {
    let closed = 0;
    for (const sub of [...subs]) {
      sub.stream.close();
      closed++;
    }
    return closed;
  }

  return {
    name: 'control-stream-hub',
    kind: 'resource',
    start: () => Promise.resolve(),
    async stop() {
      isStopped = true;
      closeEach([...groups.values()].flatMap((g) => [...g.subscribers]));
    },

    /** Registers a stream; it leaves the hub by itself when it closes. */
    add(request: Subscriber): AgentGroup {
      const key = groupKey(request.orgId, request.agentId);
      let group = groups.get(key);
      if (!group) {
        group = { orgId: request.orgId, agentId: request.agentId, subscribers: new Set(), state: undefined, refreshing: undefined, isDirty: false };
        groups.set(key, group);
      }
      // The group's copies of the ids: one string per agent, not one per stream.
      const sub: Registered = { ...request, orgId: group.orgId, agentId: group.agentId, slot: added++ % HEARTBEAT_SLICES };
      group.subscribers.add(sub);
      if (sub.keyId !== undefined) {
        let forKey = byKey.get(sub.keyId);
        if (!forKey) byKey.set(sub.keyId, (forKey = new Set()));
        forKey.add(sub);
      }
      streams++;
      sub.stream.onClosed = () => remove(sub);
      if (isStopped) {
        sub.stream.close();
        return group;
      }
      if (!timer) {
        timer = setInterval(beat, Math.max(1, Math.floor(heartbeatMs / HEARTBEAT_SLICES)));
        timer.unref();
      }
      return group;
    },

    group: (orgId: string, agentId: string): AgentGroup | undefined => groups.get(groupKey(orgId, agentId)),
    groups: (): AgentGroup[] => [...groups.values()],

    /** Sends one encoded message to every stream of the agent. */
    broadcast(group: AgentGroup, key: string, message: Buffer | string, onlyDashboards = false): void {
      for (const sub of group.subscribers) if (!onlyDashboards || sub.isDashboard) sub.stream.sendFormatted(key, message);
    },

    closeAgent: (orgId: string, agentId: string): number => closeEach(groups.get(groupKey(orgId, agentId))?.subscribers ?? []),
    closeKey: (keyId: string): number => closeEach(byKey.get(keyId) ?? []),

    stats(): HubStats {
      let bufferedBytes = 0;
      let pendingMessages = 0;
      for (const group of groups.values()) {
        for (const sub of group.subscribers) {
          const b = sub.stream.buffered;
          bufferedBytes += b.bytes;
          pendingMessages += b.messages;
        }
      }
      return { streams, agents: groups.size, heartbeatTimers: timer ? 1 : 0, bufferedBytes, pendingMessages };
    },
  } satisfies Worker & Record<string, unknown>;
}
export type StreamHub = ReturnType<typeof createStreamHub>;
