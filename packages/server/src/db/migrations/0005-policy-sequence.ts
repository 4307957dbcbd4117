import type { Kysely, Migration } from 'kysely';

/**
 * Rollback is an ordinary activation (contract section 6), so a version number no longer tells
 * an SDK which bundle is newer. `policy_sequence` counts the agent's activations (1, 2, …, never
 * reused); bundles carry it, and SDKs refuse one lower than what they applied. An agent that
 * already has an active version starts at 1.
 */
export const policySequence = (): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('agents').addColumn('policy_sequence', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await (db as Kysely<{ agents: { policy_sequence: number; active_policy_version: number | null } }>)
      .updateTable('agents')
      .set({ policy_sequence: 1 })
      .where('active_policy_version', 'is not', null)
      .execute();
  },
});
