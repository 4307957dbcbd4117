import type { CreatePolicyBody, Page, PolicyDocument, PolicyVersion } from '@corral/contracts';
import type { Store } from '../../db/database.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { Actor } from '../../domain/principal.js';
import { type Clock, toIso, toIsoOrNull } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AuditStore } from '../audit/index.js';
import { hashPolicy, parseYamlPolicy, type PolicySource, validatePolicy } from './policy-document.js';
import type { PolicyStore, PolicyVersionRow } from './policy-store.js';

/** What other features hear about policies, after the change has committed. */
export interface PolicyEvents {
  policyActivated(orgId: string, agentId: string, version: number): void;
}
const noPolicyEvents: PolicyEvents = { policyActivated: () => undefined };

interface Deps {
  db: Pick<Store, 'kysely'>;
  policyStore: PolicyStore;
  auditStore: Pick<AuditStore, 'record'>;
  clock: Clock;
  events?: PolicyEvents;
}

export const documentOf = (row: PolicyVersionRow): PolicyDocument => JSON.parse(row.document) as PolicyDocument;

function toPolicyVersion(row: PolicyVersionRow, activeVersion: number | null): PolicyVersion {
  return {
    id: row.id,
    agent_id: row.agent_id,
    version: row.version,
    hash: row.hash,
    mode: row.mode as PolicyVersion['mode'],
    description: row.description,
    policy: documentOf(row),
    is_active: row.version === activeVersion,
    created_at: toIso(row.created_at),
    activated_at: toIsoOrNull(row.activated_at),
  };
}

/** The pagination cursor is the last version number of the previous page. */
export function parseVersionCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  if (!/^[1-9]\d{0,9}$/.test(cursor)) throw new ValidationError('cursor is not valid', [{ field: 'cursor', message: 'must be a cursor from next_cursor' }]);
  return Number(cursor);
}

function documentFrom(input: CreatePolicyBody): { document: PolicyDocument; source: PolicySource } {
  const hasJson = input.policy !== undefined;
  if (hasJson === (input.yaml_content !== undefined)) {
    throw new ValidationError('Send exactly one of policy (JSON) and yaml_content (YAML)', [
      { field: hasJson ? 'yaml_content' : 'policy', message: hasJson ? 'cannot be sent with policy' : 'policy or yaml_content is required' },
    ]);
  }
  const source: PolicySource = hasJson ? 'policy' : 'yaml_content';
  const raw = hasJson ? input.policy : parseYamlPolicy(input.yaml_content ?? '');
  return { document: validatePolicy(raw, source), source };
}

export function createPolicyService({ db, policyStore, auditStore, clock, events = noPolicyEvents }: Deps) {
  async function mustGetAgent(orgId: string, agentId: string, ...rest: [conn?: Parameters<PolicyStore['agentState']>[2], lock?: boolean]) {
    const state = await policyStore.agentState(orgId, agentId, ...rest);
    if (!state) throw new NotFoundError('Agent');
    return state;
  }

  return {
    /** Versions count up from 1 per agent; with `activate` the new version is active on return. */
    async create(orgId: string, actor: Actor, agentId: string, input: CreatePolicyBody): Promise<PolicyVersion> {
      const { document, source } = documentFrom(input);
      const hash = hashPolicy(document);
      const now = clock.now();
      const activate = input.activate === true;
      const row = await db.kysely.transaction().execute(async (trx) => {
        await mustGetAgent(orgId, agentId, trx, true);
        const created: PolicyVersionRow = {
          org_id: orgId,
          agent_id: agentId,
          version: (await policyStore.latestVersion(trx, orgId, agentId)) + 1,
          id: newId(),
          hash,
          mode: document.mode,
          description: input.description ?? null,
          document: JSON.stringify(document),
          created_by: actor.id,
          created_at: now,
          activated_at: activate ? now : null,
        };
        await policyStore.insert(trx, created);
        await auditStore.record(trx, {
          orgId, actor, action: 'policy.create', targetType: 'agent', targetId: agentId, at: now,
          details: { version: created.version, hash, mode: document.mode, rules: document.rules.length, format: source === 'policy' ? 'json' : 'yaml' },
        });
        if (activate) {
          const sequence = await policyStore.activate(trx, orgId, agentId, created.version, document.mode, now);
          await auditStore.record(trx, {
            orgId, actor, action: 'policy.activate', targetType: 'agent', targetId: agentId, at: now,
            details: { version: created.version, hash, mode: document.mode, sequence },
          });
        }
        return created;
      });
      if (activate) events.policyActivated(orgId, agentId, row.version);
      return toPolicyVersion(row, activate ? row.version : null);
    },

    /**
     * Makes any existing version the active one, older ones included: a rollback is an ordinary
     * activation (contract section 6). Each activation takes the agent's next sequence number,
     * which the signed bundles carry, so SDKs tell a rollback from a replayed old bundle.
     * Activating the version that is already active changes nothing.
     */
    async activate(orgId: string, actor: Actor, agentId: string, version: number): Promise<PolicyVersion> {
      const now = clock.now();
      const { row, changed } = await db.kysely.transaction().execute(async (trx) => {
        const state = await mustGetAgent(orgId, agentId, trx, true);
        const found = await policyStore.get(orgId, agentId, version, trx);
        if (!found) throw new NotFoundError('Policy version');
        if (state.active_policy_version === version) return { row: found, changed: false };
        const sequence = await policyStore.activate(trx, orgId, agentId, version, found.mode, now);
        await auditStore.record(trx, {
          orgId, actor, action: 'policy.activate', targetType: 'agent', targetId: agentId, at: now,
          details: { version, hash: found.hash, mode: found.mode, previous: state.active_policy_version, sequence },
        });
        return { row: { ...found, activated_at: now }, changed: true };
      });
      if (changed) events.policyActivated(orgId, agentId, version);
      return toPolicyVersion(row, version);
    },

    async list(orgId: string, agentId: string, limit: number, before: number | undefined): Promise<Page<PolicyVersion>> {
      const { active_policy_version: active } = await mustGetAgent(orgId, agentId);
      const rows = await policyStore.list(orgId, agentId, limit, before);
      const hasMore = rows.length > limit;
      const page = hasMore ? rows.slice(0, limit) : rows;
      return {
        data: page.map((r) => toPolicyVersion(r, active)),
        has_more: hasMore,
        next_cursor: hasMore ? String(page[page.length - 1]?.version) : null,
      };
    },

    async get(orgId: string, agentId: string, version: number): Promise<PolicyVersion> {
      const { active_policy_version: active } = await mustGetAgent(orgId, agentId);
      const row = await policyStore.get(orgId, agentId, version);
      if (!row) throw new NotFoundError('Policy version');
      return toPolicyVersion(row, active);
    },

    async getActive(orgId: string, agentId: string): Promise<PolicyVersion> {
      const { active_policy_version: active } = await mustGetAgent(orgId, agentId);
      const row = active === null ? undefined : await policyStore.get(orgId, agentId, active);
      if (!row) throw new NotFoundError('Active policy');
      return toPolicyVersion(row, active);
    },

    /** Kill switch and active version in one read, for the control plane; undefined for an unknown agent. */
    controlState: (orgId: string, agentId: string) => policyStore.controlState(orgId, agentId),
  };
}
export type PolicyService = ReturnType<typeof createPolicyService>;
