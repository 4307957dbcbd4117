import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { columnTypes } from './column-types.js';

/**
 * Alert rules, their history of firing/resolved transitions, and the notification outbox with
 * every delivery attempt (docs/alerts.md). The outbox row is written in the transition's own
 * transaction, so a transition is never recorded without its notification, or the reverse; the
 * dispatcher delivers from it, so a restart loses nothing.
 */
export const alerts = (dialect: DialectName): Migration => {
  const t = columnTypes(dialect);
  const real = dialect === 'postgres' ? ('double precision' as const) : ('real' as const);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('alert_rules')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('agent_id', t.uuid, (c) => c.notNull())
        .addColumn('condition_type', 'text', (c) => c.notNull())
        .addColumn('threshold', real, (c) => c.notNull())
        .addColumn('window_minutes', 'integer', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('channel_target', 'text', (c) => c.notNull())
        .addColumn('cooldown_minutes', 'integer', (c) => c.notNull())
        .addColumn('action', 'text')
        .addColumn('is_enabled', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('last_value', real)
        .addColumn('last_evaluated_at', t.time)
        .addColumn('last_triggered_at', t.time)
        .addColumn('last_notified_at', t.time)
        .addColumn('muted_until', t.time)
        .addColumn('notification_count', 'bigint', (c) => c.notNull())
        // Encrypted with CORRAL_ENCRYPTION_KEY (AES-256-GCM); the previous secret keeps signing
        // beside the new one for a day after a rotation.
        .addColumn('webhook_secret', 'text')
        .addColumn('previous_webhook_secret', 'text')
        .addColumn('previous_secret_expires_at', t.time)
        // The evaluation slot this rule is next due at; evaluators claim rules by moving it on.
        .addColumn('next_eval_at', t.time, (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addColumn('updated_at', t.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('alert_rules_pk', ['org_id', 'id'])
        .execute();
      // Evaluators look for due rules across organizations.
      await db.schema
        .createIndex('alert_rules_due_idx')
        .on('alert_rules')
        .column('next_eval_at')
        .where(sql.ref('is_enabled'), '=', 1)
        .execute();

      await db.schema
        .createTable('alert_history')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('alert_id', t.uuid, (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('value', real, (c) => c.notNull())
        .addColumn('threshold', real, (c) => c.notNull())
        .addColumn('condition_type', 'text', (c) => c.notNull())
        .addColumn('window_start', t.time, (c) => c.notNull())
        .addColumn('window_end', t.time, (c) => c.notNull())
        .addColumn('notification', 'text', (c) => c.notNull())
        .addColumn('action', 'text')
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('alert_history_pk', ['org_id', 'id'])
        .execute();
      await db.schema.createIndex('alert_history_alert_idx').on('alert_history').columns(['org_id', 'alert_id', 'id']).execute();

      await db.schema
        .createTable('alert_notifications')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('alert_id', t.uuid, (c) => c.notNull())
        .addColumn('history_id', t.uuid)
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('recipient', 'text', (c) => c.notNull())
        // The message as it was when the transition happened: retries send the same content.
        .addColumn('payload', t.json, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('next_attempt_at', t.time)
        .addColumn('delivered_at', t.time)
        // A dispatcher's claim: its token and until when it holds the row (a crashed one's lapses).
        .addColumn('claim_id', 'text')
        .addColumn('claimed_until', t.time)
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addColumn('updated_at', t.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('alert_notifications_pk', ['org_id', 'id'])
        .execute();
      await db.schema.createIndex('alert_notifications_alert_idx').on('alert_notifications').columns(['org_id', 'alert_id', 'id']).execute();
      // The outbox: only undelivered rows are indexed, so the dispatcher's poll stays cheap.
      await db.schema
        .createIndex('alert_notifications_due_idx')
        .on('alert_notifications')
        .column('next_attempt_at')
        .where(sql.ref('status'), '=', 'retrying')
        .execute();

      await db.schema
        .createTable('alert_notification_attempts')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('notification_id', t.uuid, (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('http_status', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('alert_notification_attempts_pk', ['org_id', 'notification_id', 'attempt'])
        .execute();
    },
  };
};
