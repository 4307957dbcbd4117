import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp } from './common.js';
import { PolicyHash } from './policies.js';

/**
 * SDK instances: each SDK process reports what it has applied, and people see which instances
 * run what. `connected` is the service's judgement, from `last_seen_at` and `closed_at`.
 */
export const INSTANCE_HEARTBEAT_SECONDS = 30;
/** An instance not heard from for this long (three missed heartbeats) is shown as not connected. */
export const INSTANCE_STALE_SECONDS = 90;

export const InstanceTransport = StringEnum(['sse', 'poll']);
export type InstanceTransport = Static<typeof InstanceTransport>;

const InstanceId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._:-]+$', description: "The SDK process's own id (the SDK uses a random UUID)" });

export const ReportInstanceBody = Type.Object(
  {
    instance_id: InstanceId,
    hostname: Type.String({ maxLength: 255 }),
    sdk_version: Type.String({ maxLength: 100 }),
    transport: InstanceTransport,
    applied_at: Type.Union([Timestamp, Type.Null()], { description: 'When the SDK applied its current state; null before it received any. A time ahead of the service clock is stored as the service time.' }),
    policy_version: Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Null()]),
    policy_sequence: Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Null()]),
    policy_hash: Type.Union([PolicyHash, Type.Null()]),
    kill_switch_active: Type.Boolean(),
    closed: Type.Optional(Type.Boolean({ description: 'True in the last report of an instance that is closing: it is shown as not connected at once. Any later report of the same instance clears it.' })),
  },
  { additionalProperties: false, description: 'What one SDK process has applied; sent when it changes, every 30 s as a heartbeat, and once when it closes' },
);
export type ReportInstanceBody = Static<typeof ReportInstanceBody>;

export const AgentInstance = Type.Object({
  instance_id: Type.String(),
  hostname: Type.String(),
  sdk_version: Type.String(),
  transport: InstanceTransport,
  applied_at: Type.Union([Timestamp, Type.Null()]),
  connected: Type.Boolean({ description: 'Reported within the last 90 seconds, and not closed since' }),
  policy_version: Type.Union([Type.Integer(), Type.Null()]),
  policy_sequence: Type.Union([Type.Integer(), Type.Null()]),
  policy_hash: Type.Union([PolicyHash, Type.Null()]),
  kill_switch_active: Type.Boolean(),
  last_seen_at: Timestamp,
  closed_at: Type.Union([Timestamp, Type.Null()], { description: 'When the instance reported that it was closing; null while it runs' }),
});
export type AgentInstance = Static<typeof AgentInstance>;
