import type { Store } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AgentService } from '../agents/index.js';
import type { AuditStore } from '../audit/index.js';
import type { AgentWindowStats } from '../dashboard/index.js';
import { createAlertEvaluator } from './alert-evaluator.js';
import { createAlertService } from './alert-service.js';
import { createAlertStore } from './alert-store.js';
import { createEmailSender } from './email-sender.js';
import { createNotificationDispatcher } from './notification-dispatcher.js';
import { createNotificationStore } from './notification-store.js';
import { createWebhookSender, type Resolve } from './webhook-sender.js';

/** Where notifications go out, from the configuration (CORRAL_SMTP_*, CORRAL_WEBHOOK_ALLOW_PRIVATE, CORRAL_PUBLIC_URL). */
export interface AlertSettings {
  readonly smtpUrl?: string | undefined;
  readonly smtpFrom?: string | undefined;
  readonly webhookAllowPrivate?: boolean | undefined;
  /** Links in messages start with it; no trailing slash. */
  readonly publicUrl?: string | undefined;
  /** Tests shorten an attempt's timeout; the service keeps 10 s. */
  readonly timeoutMs?: number | undefined;
  /** Tests play a hostile DNS. */
  readonly resolve?: Resolve | undefined;
  /** Tests pin the retry jitter. */
  readonly random?: (() => number) | undefined;
}

interface Deps {
  db: Store;
  agentService: Pick<AgentService, 'get' | 'engageKillSwitchWithin'>;
  auditStore: Pick<AuditStore, 'record'>;
  windowStats: AgentWindowStats;
  secretBox: SecretBox;
  clock: Clock;
  log: Logger;
  settings: AlertSettings;
  /** Where the workers report what they did (metrics). */
  observe?: {
    evaluationRound?: (lagMs: number) => void;
    deliveryAttempt?: (status: 'delivered' | 'retrying' | 'failed') => void;
  };
}

/** The alerts feature wired: its stores, senders, the two workers and the service. */
export function composeAlerts({ db, agentService, auditStore, windowStats, secretBox, clock, log, settings, observe = {} }: Deps) {
  const publicUrl = settings.publicUrl ?? 'http://127.0.0.1:8080';
  const alertStore = createAlertStore(db);
  const notificationStore = createNotificationStore(db);
  const emailSender = createEmailSender({
    smtpUrl: settings.smtpUrl, from: settings.smtpFrom ?? 'Corral <alerts@localhost>', ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
  });
  const webhookSender = createWebhookSender({
    allowPrivate: settings.webhookAllowPrivate ?? false,
    ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.resolve ? { resolve: settings.resolve } : {}),
  });
  const dispatcher = createNotificationDispatcher({
    db, notificationStore, alertStore, webhookSender, emailSender, secretBox, clock, log, ...(settings.random ? { random: settings.random } : {}),
    ...(observe.deliveryAttempt ? { onAttempt: observe.deliveryAttempt } : {}),
  });
  const evaluator = createAlertEvaluator({
    db, alertStore, notificationStore, windowStats, agentService, clock, log, publicUrl, onQueued: () => dispatcher.wake(),
    ...(observe.evaluationRound ? { onRound: observe.evaluationRound } : {}),
  });
  const alertService = createAlertService({ db, alertStore, notificationStore, agentService, auditStore, dispatcher, secretBox, clock, publicUrl });
  return { alertService, evaluator, dispatcher, outboxDepth: () => notificationStore.depth() };
}
