import type { ApiKey, ApiKeyScope, CreateApiKeyBody, CreatedApiKey, Page } from '@corral/contracts';
import { ErrorCode } from '@corral/contracts';
import type { Store } from '../../db/database.js';
import { ConflictError, NotFoundError, PlanLimitError, UnauthorizedError, ValidationError } from '../../errors.js';
import type { Actor, Principal } from '../../domain/principal.js';
import { type Clock, parseTimestamp, toIso, toIsoOrNull } from '../../lib/clock.js';
import { toPage } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { AuditStore } from '../audit/index.js';
import { type OrgStore, planLimits } from '../orgs/index.js';
import { generateApiKey, hashApiKey, hashesEqual, isWellFormedKey, prefixOf } from './api-key-format.js';
import type { ApiKeyRow, ApiKeyStore } from './api-key-store.js';

/** What other features hear about keys, after the change has committed. */
export interface ApiKeyEvents {
  keyRevoked(orgId: string, keyId: string): void;
}

interface Deps {
  db: Pick<Store, 'kysely'>;
  apiKeyStore: ApiKeyStore;
  orgStore: Pick<OrgStore, 'lockForUpdate'>;
  auditStore: Pick<AuditStore, 'record'>;
  clock: Clock;
  /** How often last_used_at is written per key; reads stay exact to this granularity. */
  lastUsedResolutionMs?: number;
  events?: ApiKeyEvents;
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    description: row.description,
    key_prefix: row.key_prefix,
    environment: row.environment as ApiKey['environment'],
    scope: JSON.parse(row.scope) as ApiKeyScope,
    last_used_at: toIsoOrNull(row.last_used_at),
    expires_at: toIsoOrNull(row.expires_at),
    revoked_at: toIsoOrNull(row.revoked_at),
    created_at: toIso(row.created_at),
  };
}

export function createApiKeyService({ db, apiKeyStore, orgStore, auditStore, clock, lastUsedResolutionMs = 60_000, events }: Deps) {
  // last_used_at is written at most once per resolution per key and process, off the request
  // path: authentication stays one indexed read.
  const lastTouched = new Map<string, number>();

  function touchLater(row: ApiKeyRow, now: number): void {
    const previous = lastTouched.get(row.id) ?? row.last_used_at ?? 0;
    if (now - previous < lastUsedResolutionMs) return;
    lastTouched.set(row.id, now);
    if (lastTouched.size > 100_000) lastTouched.clear();
    apiKeyStore.touch(row.org_id, row.id, now).catch(() => lastTouched.delete(row.id));
  }

  return {
    async create(orgId: string, actor: Actor, input: CreateApiKeyBody): Promise<CreatedApiKey> {
      const now = clock.now();
      const expiresAt = input.expires_at ? parseTimestamp(input.expires_at) : null;
      if (expiresAt !== null && expiresAt <= now) {
        throw new ValidationError('expires_at must be in the future', [{ field: 'expires_at', message: 'must be in the future' }]);
      }
      const environment = input.environment ?? 'live';
      const generated = generateApiKey(environment);
      const row: ApiKeyRow = {
        org_id: orgId,
        id: newId(),
        name: input.name,
        description: input.description ?? null,
        key_prefix: generated.prefix,
        key_hash: generated.hash,
        environment,
        scope: JSON.stringify(input.scope),
        created_by: actor.id,
        last_used_at: null,
        expires_at: expiresAt,
        revoked_at: null,
        created_at: now,
      };
      await db.kysely.transaction().execute(async (trx) => {
        const plan = await orgStore.lockForUpdate(trx, orgId);
        const limit = planLimits[plan].apiKeys;
        if ((await apiKeyStore.countActive(trx, orgId, now)) >= limit) {
          throw new PlanLimitError(`The ${plan} plan allows ${limit} active API keys; revoke one or change plan`);
        }
        await apiKeyStore.insert(trx, row);
        await auditStore.record(trx, {
          orgId, actor, action: 'api_key.create', targetType: 'api_key', targetId: row.id, at: now,
          details: { name: row.name, scope: input.scope, environment, key_prefix: row.key_prefix },
        });
      });
      return {
        id: row.id,
        name: row.name,
        key: generated.key,
        key_prefix: row.key_prefix,
        scope: input.scope,
        environment,
        expires_at: toIsoOrNull(expiresAt),
        created_at: toIso(now),
      };
    },

    async list(orgId: string, limit: number, before: string | undefined): Promise<Page<ApiKey>> {
      return toPage(await apiKeyStore.list(orgId, limit, before), limit, toApiKey);
    },

    async revoke(orgId: string, actor: Actor, id: string): Promise<void> {
      const now = clock.now();
      const revoked = await db.kysely.transaction().execute(async (trx) => {
        const existing = await apiKeyStore.get(orgId, id, trx);
        if (!existing) throw new NotFoundError('API key');
        // Revoking twice is harmless and keeps the first revocation time.
        if (!(await apiKeyStore.revoke(trx, orgId, id, now))) return false;
        await auditStore.record(trx, { orgId, actor, action: 'api_key.revoke', targetType: 'api_key', targetId: id, at: now });
        return true;
      });
      // Streams opened with the key close at once, here and in every other process.
      if (revoked) events?.keyRevoked(orgId, id);
    },

    async delete(orgId: string, actor: Actor, id: string): Promise<void> {
      const now = clock.now();
      await db.kysely.transaction().execute(async (trx) => {
        const existing = await apiKeyStore.get(orgId, id, trx);
        if (!existing) throw new NotFoundError('API key');
        if (existing.revoked_at === null) {
          throw new ConflictError('Revoke the key before deleting it', ErrorCode.apiKeyNotRevoked);
        }
        await apiKeyStore.delete(trx, orgId, id);
        await auditStore.record(trx, {
          orgId, actor, action: 'api_key.delete', targetType: 'api_key', targetId: id, at: now,
          details: { name: existing.name, key_prefix: existing.key_prefix },
        });
      });
    },

    /** X-API-Key → principal. Every failure is the same 401, so callers learn nothing about keys. */
    async authenticate(key: string): Promise<Principal> {
      if (!isWellFormedKey(key)) throw new UnauthorizedError('Invalid API key');
      const hash = hashApiKey(key);
      const now = clock.now();
      const row = (await apiKeyStore.findByPrefix(prefixOf(key))).find((r) => hashesEqual(r.key_hash, hash));
      if (!row) throw new UnauthorizedError('Invalid API key');
      if (row.revoked_at !== null) throw new UnauthorizedError('API key has been revoked');
      if (row.expires_at !== null && row.expires_at <= now) throw new UnauthorizedError('API key has expired');
      touchLater(row, now);
      return { kind: 'api_key', orgId: row.org_id, keyId: row.id, scope: JSON.parse(row.scope) as ApiKeyScope };
    },
  };
}
export type ApiKeyService = ReturnType<typeof createApiKeyService>;
