import type { Agent, CreateAgentBody, Page, UpdateAgentBody } from '@corral/contracts';
import type { Transaction } from 'kysely';
import type { Store } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { ConflictError, NotFoundError, PlanLimitError } from '../../errors.js';
import type { Actor } from '../../domain/principal.js';
import { type Clock, toIso } from '../../lib/clock.js';
import { toPage } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { AuditStore } from '../audit/index.js';
import { type OrgStore, planLimits } from '../orgs/index.js';
import type { AgentRow, AgentStore } from './agent-store.js';
import { nextFreeSlug, slugify } from './slug.js';

/** What other features hear about agents, after the change has committed. */
export interface AgentEvents {
  killSwitchChanged(orgId: string, agentId: string, active: boolean): void;
  agentDeleted(orgId: string, agentId: string): void;
}
export const noAgentEvents: AgentEvents = { killSwitchChanged: () => undefined, agentDeleted: () => undefined };

interface Deps {
  db: Pick<Store, 'kysely'>;
  agentStore: AgentStore;
  orgStore: Pick<OrgStore, 'lockForUpdate'>;
  auditStore: Pick<AuditStore, 'record'>;
  clock: Clock;
  events?: AgentEvents;
}

export function toAgent(row: AgentRow): Agent {
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    status: row.status as Agent['status'],
    public_key: row.public_key,
    kill_switch_active: row.kill_switch_active === 1,
    active_policy_mode: (row.active_policy_mode as Agent['active_policy_mode']) ?? null,
    created_at: toIso(row.created_at),
  };
}

const SLUG_ATTEMPTS = 5;
/** Agent names are at most this long (contracts/agents.ts); longer service names are cut for the name only. */
const MAX_NAME = 100;

function newAgentRow(orgId: string, name: string, description: string | null, serviceName: string | null, now: number): AgentRow {
  return {
    org_id: orgId, id: newId(), name, slug: '', description, status: 'active', public_key: null, kill_switch_active: 0,
    active_policy_version: null, active_policy_mode: null, policy_sequence: 0, service_name: serviceName,
    created_at: now, updated_at: now, deleted_at: null,
  };
}

/** What provisioning answers per service name: the agent, or why none was made. */
export type ServiceAgent = { readonly agentId: string } | { readonly refused: string };

export function createAgentService({ db, agentStore, orgStore, auditStore, clock, events = noAgentEvents }: Deps) {
  // Inside a transaction, reads must go through it: SQLite has one connection, and a read
  // outside the transaction would wait for it forever.
  async function mustGet(orgId: string, id: string, conn?: Transaction<Database>): Promise<AgentRow> {
    const row = await agentStore.get(orgId, id, conn);
    if (!row) throw new NotFoundError('Agent');
    return row;
  }

  /** Picks the first free slug; a concurrent create that took it meanwhile makes it pick again. */
  async function insertWithFreeSlug(trx: Transaction<Database>, row: AgentRow): Promise<AgentRow> {
    const base = slugify(row.name);
    for (let attempt = 1; attempt <= SLUG_ATTEMPTS; attempt++) {
      const candidate = { ...row, slug: nextFreeSlug(base, await agentStore.slugsLike(trx, row.org_id, base)) };
      if (await agentStore.insertIfSlugFree(trx, candidate)) return candidate;
    }
    throw new ConflictError('Too many agents are being created with this name at once; retry');
  }

  /** Every kill-switch change is audited, one that changes nothing included (docs/decisions.md). */
  async function writeKillSwitch(trx: Transaction<Database>, orgId: string, actor: Actor, id: string, active: boolean, reason: string | undefined): Promise<AgentRow> {
    const now = clock.now();
    const before = await mustGet(orgId, id, trx);
    const updated = await agentStore.update(trx, orgId, id, { kill_switch_active: active ? 1 : 0, updated_at: now });
    if (!updated) throw new NotFoundError('Agent');
    await auditStore.record(trx, {
      orgId, actor, action: 'agent.kill_switch', targetType: 'agent', targetId: id, at: now,
      reason: reason ?? null,
      details: { active, previous: before.kill_switch_active === 1 },
    });
    return updated;
  }

  return {
    /** The create response carries no active_policy_mode (interface section 2.2). */
    async create(orgId: string, actor: Actor, input: CreateAgentBody): Promise<Agent> {
      const now = clock.now();
      const row = await db.kysely.transaction().execute(async (trx) => {
        const plan = await orgStore.lockForUpdate(trx, orgId);
        const limit = planLimits[plan].agents;
        if ((await agentStore.countLive(trx, orgId)) >= limit) {
          throw new PlanLimitError(`The ${plan} plan allows ${limit} agents; delete one or change plan`);
        }
        const created = await insertWithFreeSlug(trx, newAgentRow(orgId, input.name, input.description ?? null, null, now));
        await auditStore.record(trx, {
          orgId, actor, action: 'agent.create', targetType: 'agent', targetId: created.id, at: now,
          details: { name: created.name, slug: created.slug },
        });
        return created;
      });
      const { active_policy_mode: _omitted, ...agent } = toAgent(row);
      return agent;
    },

    /**
     * The live agent of each OTLP service name, creating those that do not exist yet (docs/otlp.md).
     * Race-free: the organization row is locked (PostgreSQL; SQLite has one writer) and the
     * partial unique index on (org_id, service_name) holds even past the lock, so two exports of
     * a new service make one agent; the one that loses the race reads the winner's. Past the
     * plan's agent limit a new service is refused with the reason, never dropped silently.
     */
    async provisionForServices(orgId: string, actor: Actor, serviceNames: readonly string[]): Promise<Map<string, ServiceAgent>> {
      const result = new Map<string, ServiceAgent>();
      for (const [name, id] of await agentStore.liveByServiceName(db.kysely, orgId, serviceNames)) result.set(name, { agentId: id });
      const missing = [...new Set(serviceNames)].filter((n) => !result.has(n)).sort();
      if (missing.length === 0) return result;
      const now = clock.now();
      const provision = () => db.kysely.transaction().execute(async (trx) => {
        const plan = await orgStore.lockForUpdate(trx, orgId);
        const limit = planLimits[plan].agents;
        for (const [name, id] of await agentStore.liveByServiceName(trx, orgId, missing)) result.set(name, { agentId: id });
        let live = await agentStore.countLive(trx, orgId);
        for (const name of missing) {
          if (result.has(name)) continue;
          if (live >= limit) {
            result.set(name, { refused: `the ${plan} plan allows ${limit} agents; service "${name}" has no agent and none can be created` });
            continue;
          }
          const created = await insertWithFreeSlug(trx, newAgentRow(orgId, name.slice(0, MAX_NAME), 'Provisioned from OTLP service.name', name, now));
          live += 1;
          await auditStore.record(trx, {
            orgId, actor, action: 'agent.create', targetType: 'agent', targetId: created.id, at: now,
            details: { name: created.name, slug: created.slug, service_name: name, source: 'otlp' },
          });
          result.set(name, { agentId: created.id });
        }
      });
      try {
        await provision();
      } catch (err) {
        // Another process made the same service's agent between our read and our insert (the
        // unique index said so): the second try reads it.
        if (!(err instanceof ConflictError)) throw err;
        for (const name of missing) result.delete(name);
        await provision();
      }
      return result;
    },

    async list(orgId: string, limit: number, before: string | undefined): Promise<Page<Agent>> {
      return toPage(await agentStore.list(orgId, limit, before), limit, toAgent);
    },

    async get(orgId: string, id: string): Promise<Agent> {
      return toAgent(await mustGet(orgId, id));
    },

    /** Renaming keeps the slug: slugs are identifiers that links and scripts rely on. */
    async update(orgId: string, actor: Actor, id: string, input: UpdateAgentBody): Promise<Agent> {
      const now = clock.now();
      const row = await db.kysely.transaction().execute(async (trx) => {
        await mustGet(orgId, id, trx);
        const changes = {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.status !== undefined ? { status: input.status } : {}),
          updated_at: now,
        };
        const updated = await agentStore.update(trx, orgId, id, changes);
        if (!updated) throw new NotFoundError('Agent');
        await auditStore.record(trx, {
          orgId, actor, action: 'agent.update', targetType: 'agent', targetId: id, at: now,
          details: { ...input },
        });
        return updated;
      });
      return toAgent(row);
    },

    /** Soft delete: the row and its telemetry stay; the agent disappears from every read. */
    async delete(orgId: string, actor: Actor, id: string): Promise<void> {
      const now = clock.now();
      await db.kysely.transaction().execute(async (trx) => {
        const existing = await mustGet(orgId, id, trx);
        await agentStore.update(trx, orgId, id, { deleted_at: now, updated_at: now });
        await auditStore.record(trx, {
          orgId, actor, action: 'agent.delete', targetType: 'agent', targetId: id, at: now,
          details: { name: existing.name, slug: existing.slug },
        });
      });
      events.agentDeleted(orgId, id);
    },

    async setKillSwitch(orgId: string, actor: Actor, id: string, active: boolean, reason: string | undefined): Promise<Agent> {
      const row = await db.kysely.transaction().execute(async (trx) => writeKillSwitch(trx, orgId, actor, id, active, reason));
      events.killSwitchChanged(orgId, id, active);
      return toAgent(row);
    },

    /**
     * Engages the kill switch inside the caller's transaction, so an alert's action commits with
     * the transition that caused it (or not at all). Answers undefined when the switch was
     * already engaged or the agent is gone; otherwise `announce` pushes the change to SDK streams
     * and must be called once the transaction has committed. Releasing stays with people
     * (`setKillSwitch` behind a JWT admin route).
     */
    async engageKillSwitchWithin(trx: Transaction<Database>, orgId: string, actor: Actor, id: string, reason: string): Promise<{ announce(): void } | undefined> {
      const current = await agentStore.get(orgId, id, trx);
      if (!current || current.kill_switch_active === 1) return undefined;
      await writeKillSwitch(trx, orgId, actor, id, true, reason);
      return { announce: () => events.killSwitchChanged(orgId, id, true) };
    },

    /**
     * First registration stores the key; the same key again is a no-op (`registered: false`);
     * a different key is a 409: a leaked API key must not let someone swap the signing identity.
     */
    async registerPublicKey(orgId: string, actor: Actor, id: string, publicKeyHex: string) {
      const publicKey = publicKeyHex.toLowerCase();
      const now = clock.now();
      return db.kysely.transaction().execute(async (trx) => {
        const existing = await mustGet(orgId, id, trx);
        if (existing.public_key !== null) {
          if (existing.public_key === publicKey) return { registered: false, public_key: publicKey };
          throw new ConflictError('The agent already has a different public key');
        }
        if (!(await agentStore.setPublicKeyIfEmpty(trx, orgId, id, publicKey, now))) {
          const current = await agentStore.get(orgId, id, trx);
          if (current?.public_key === publicKey) return { registered: false, public_key: publicKey };
          throw new ConflictError('The agent already has a different public key');
        }
        await auditStore.record(trx, {
          orgId, actor, action: 'agent.public_key.register', targetType: 'agent', targetId: id, at: now,
          details: { public_key: publicKey },
        });
        return { registered: true, public_key: publicKey };
      });
    },
  };
}
export type AgentService = ReturnType<typeof createAgentService>;
