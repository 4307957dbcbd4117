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
        const created = await insertWithFreeSlug(trx, {
          org_id: orgId,
          id: newId(),
          name: input.name,
          slug: '',
          description: input.description ?? null,
          status: 'active',
          public_key: null,
          kill_switch_active: 0,
          active_policy_version: null,
          active_policy_mode: null,
          policy_sequence: 0,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        });
        await auditStore.record(trx, {
          orgId, actor, action: 'agent.create', targetType: 'agent', targetId: created.id, at: now,
          details: { name: created.name, slug: created.slug },
        });
        return created;
      });
      const { active_policy_mode: _omitted, ...agent } = toAgent(row);
      return agent;
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
