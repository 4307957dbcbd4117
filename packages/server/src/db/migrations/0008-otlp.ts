import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { columnTypes } from './column-types.js';

/**
 * OTLP ingestion (docs/otlp.md):
 * - agents gain `service_name`, the OTLP resource attribute an agent was provisioned from; one
 *   live agent per organization and service name (a partial unique index), so two exports of a
 *   new service arriving at once create one agent: the second insert finds the first.
 * - GenAI usage rollups per minute/hour/day, agent, provider and model, so token and cost
 *   analytics read a few rows per bucket whatever the volume.
 */
export const otlp = (dialect: DialectName): Migration => {
  const t = columnTypes(dialect);
  const count = 'bigint' as const;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('agents').addColumn('service_name', 'text').execute();
      await db.schema
        .createIndex('agents_service_name_uq')
        .unique()
        .on('agents')
        .columns(['org_id', 'service_name'])
        .where(sql.ref('service_name'), 'is not', null)
        .where(sql.ref('deleted_at'), 'is', null)
        .execute();

      await db.schema
        .createTable('telemetry_model_rollups')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('grain', 'integer', (c) => c.notNull())
        .addColumn('bucket_start', t.time, (c) => c.notNull())
        .addColumn('agent_id', t.uuid, (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('calls', count, (c) => c.notNull())
        .addColumn('input_tokens', count, (c) => c.notNull())
        .addColumn('output_tokens', count, (c) => c.notNull())
        .addColumn('cached_input_tokens', count, (c) => c.notNull())
        .addColumn('reasoning_tokens', count, (c) => c.notNull())
        .addPrimaryKeyConstraint('telemetry_model_rollups_pk', ['org_id', 'grain', 'bucket_start', 'agent_id', 'provider', 'model'])
        .execute();
    },
  };
};
