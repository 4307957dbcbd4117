import {
  type ControlState, type DsseEnvelope, type InitEvent, POLICY_BUNDLE_MEDIA_TYPE, type PolicyBundle, type PolicyUpdatedEvent,
} from '@corral/contracts';
import canonicalizeModule from 'canonicalize';
import { NotFoundError } from '../../errors.js';
import { type Clock, toIso } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { Logger } from '../../lib/logger.js';
import { encodeEvent, type EventStream } from '../../lib/sse-message.js';
import { type ActivePolicy, documentOf, type PolicyService } from '../policies/index.js';
import type { SigningService } from '../signing/index.js';
import type { ControlBus, ControlMessage } from './control-bus.js';
import type { AgentGroup, StreamHub, Subscriber } from './stream-hub.js';

// canonicalize is CommonJS; its default export arrives wrapped under NodeNext.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string;

interface Deps {
  policyService: Pick<PolicyService, 'controlState'>;
  signingService: Pick<SigningService, 'sign'>;
  hub: StreamHub;
  bus: Pick<ControlBus, 'subscribe' | 'onResync' | 'ready'>;
  clock: Clock;
  log: Logger;
}

export type StreamRequest = Omit<Subscriber, 'stream'>;

/**
 * Stages of a change reaching an SDK: the service commits, publishes a hint on the bus, every
 * process holding streams for the agent re-reads the committed state once, formats each event
 * once, and writes it to each stream. A stream registers before it reads its `init` state and
 * holds what arrives meanwhile, so no change can fall between `init` and the first push.
 */
export function createControlService({ policyService, signingService, hub, bus, clock, log }: Deps) {
  async function envelopeOf(agentId: string, row: ActivePolicy): Promise<DsseEnvelope> {
    const bundle: PolicyBundle = {
      agent_id: agentId, version: row.version, sequence: row.sequence, hash: row.hash, issued_at: toIso(clock.now()), policy: documentOf(row),
    };
    return signingService.sign(POLICY_BUNDLE_MEDIA_TYPE, Buffer.from(canonicalize(bundle), 'utf8'));
  }

  async function mustRead(orgId: string, agentId: string) {
    const state = await policyService.controlState(orgId, agentId);
    if (!state) throw new NotFoundError('Agent');
    return state;
  }

  /** Pushes what changed since this process last pushed; activation sequences only move forward. */
  async function refreshOnce(group: AgentGroup): Promise<void> {
    const state = await policyService.controlState(group.orgId, group.agentId);
    if (!state) {
      hub.closeAgent(group.orgId, group.agentId);
      return;
    }
    const known = group.state;
    if (!known || known.killSwitchActive !== state.killSwitchActive) {
      hub.broadcast(group, 'kill_switch', encodeEvent({ event: 'kill_switch', id: newId(), data: { active: state.killSwitchActive } }));
    }
    const active = state.active;
    const isNewer = active !== undefined && (known?.policySequence ?? 0) < active.sequence;
    if (active && isNewer) {
      const data: PolicyUpdatedEvent = {
        version: active.version, sequence: active.sequence, hash: active.hash, policy_envelope: await envelopeOf(group.agentId, active),
      };
      hub.broadcast(group, 'policy_updated', encodeEvent({ event: 'policy_updated', id: newId(), data }));
    }
    group.state = {
      killSwitchActive: state.killSwitchActive,
      policySequence: isNewer ? active.sequence : (known?.policySequence ?? 0),
    };
  }

  // One refresh at a time per agent; hints that arrive during one cause one more afterwards,
  // so reads never race each other and the last read follows the last commit.
  function refresh(group: AgentGroup): void {
    if (group.refreshing) {
      group.isDirty = true;
      return;
    }
    group.refreshing = (async () => {
      try {
        do {
          group.isDirty = false;
          await refreshOnce(group);
        } while (group.isDirty && group.subscribers.size > 0);
      } catch (err) {
        log.error({ err, orgId: group.orgId, agentId: group.agentId }, 'control streams could not be refreshed; the next change retries');
      } finally {
        // In the same step as the last check, so no hint can fall between the two.
        group.refreshing = undefined;
      }
    })();
  }

  function handle(message: ControlMessage): void {
    switch (message.kind) {
      case 'agent_changed': {
        const group = hub.group(message.orgId, message.agentId);
        if (group) refresh(group);
        return;
      }
      case 'agent_deleted':
        hub.closeAgent(message.orgId, message.agentId);
        return;
      case 'key_revoked':
        hub.closeKey(message.keyId);
        return;
      case 'events_stored': {
        // A hint, no data: the page reads the new events through the events API, with its filters.
        const group = hub.group(message.orgId, message.agentId);
        if (group) hub.broadcast(group, 'telemetry', encodeEvent({ event: 'telemetry', id: newId(), data: { agent_id: message.agentId } }), true);
        return;
      }
    }
  }
  bus.subscribe(handle);
  bus.onResync(() => {
    for (const group of hub.groups()) refresh(group);
  });

  return {
    /** The polling fallback; the envelope is signed on every call. */
    async state(orgId: string, agentId: string): Promise<ControlState> {
      const state = await mustRead(orgId, agentId);
      return { kill_switch_active: state.killSwitchActive, policy_envelope: state.active ? await envelopeOf(agentId, state.active) : null };
    },

    /** Checks the agent and that cross-process messages flow, before any byte of the stream is sent. */
    async prepare(orgId: string, agentId: string): Promise<void> {
      await mustRead(orgId, agentId);
      await bus.ready();
    },

    /** Registers an opened (held) stream, sends `init`, then lets pushed events through. */
    async attach(stream: EventStream, request: StreamRequest): Promise<void> {
      const group = hub.add({ ...request, stream });
      try {
        const state = await mustRead(request.orgId, request.agentId);
        const active = state.active;
        const init: InitEvent = {
          kill_switch_active: state.killSwitchActive,
          active_policy_hash: active?.hash ?? null,
          policy_envelope: active ? await envelopeOf(request.agentId, active) : null,
        };
        group.state ??= { killSwitchActive: state.killSwitchActive, policySequence: active?.sequence ?? 0 };
        stream.send({ event: 'init', id: newId(), data: init });
        stream.release();
      } catch (err) {
        stream.close();
        throw err;
      }
    },
  };
}
export type ControlService = ReturnType<typeof createControlService>;
