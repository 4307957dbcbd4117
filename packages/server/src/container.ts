import type { Plan, PriceTable } from '@corral/contracts';
import type { FastifyInstance } from 'fastify';
import type { Db } from './db/database.js';
import type { Clock } from './lib/clock.js';
import type { Worker } from './lib/lifecycle.js';
import type { Logger } from './lib/logger.js';
import { createMetrics } from './lib/metrics.js';
import { createSecretBox, generateEncryptionKey, parseEncryptionKey } from './lib/secret-box.js';
import { agentRoutes, createAgentService, createAgentStore } from './features/agents/index.js';
import { createInstanceService, createInstanceStore, instanceRoutes } from './features/instances/index.js';
import { alertRoutes, type AlertSettings, composeAlerts } from './features/alerts/index.js';
import { apiKeyRoutes, createApiKeyService, createApiKeyStore } from './features/api-keys/index.js';
import { auditRoutes, createAuditStore } from './features/audit/index.js';
import { createAuthenticator, createJwtVerifier, type JwtSettings } from './features/auth/index.js';
import {
  controlEventsOn, controlRoutes, eventsStoredHints, createControlService, createMemoryControlBus, createPostgresControlBus, createStreamHub,
} from './features/control/index.js';
import {
  createAgentWindowStats, createDashboardService, createDashboardStore, createPriceBook, dashboardRoutes,
} from './features/dashboard/index.js';
import { createOrgService, createOrgStore } from './features/orgs/index.js';
import { createOtlpGrpcServer, createOtlpService, otlpRoutes } from './features/otlp/index.js';
import { createPolicyService, createPolicyStore, policyRoutes } from './features/policies/index.js';
import { createMemoryRateLimitStore, createPostgresRateLimitStore, createRateLimiter } from './features/rate-limits/index.js';
import {
  createPartitionEventExpiry, createRetentionStore, createRetentionWorker, createRowEventExpiry, type RetentionStore,
} from './features/retention/index.js';
import { createSessionService, sessionRoutes } from './features/session/index.js';
import { webUiRoutes } from './features/web-ui/index.js';
import {
  createSigningKeyStore, createSigningService, generateSigningKeyPem, parseSigningKey, signingRoutes,
} from './features/signing/index.js';
import {
  createIngestService, createPartitionManager, createPostgresTelemetryWriter, createSqliteTelemetryWriter, createTelemetryService,
  createTelemetryStore, telemetryRoutes,
} from './features/telemetry/index.js';

/** Registers one feature's routes on a host. */
export type RouteModule = (app: FastifyInstance) => PromiseLike<unknown>;

export interface ContainerOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  jwt: JwtSettings;
  defaultPlan: Plan;
  /** Ingest events per minute per organization, by plan (CORRAL_RATE_LIMIT_*); contract defaults when absent. */
  rateLimits?: Readonly<Record<Plan, number>> | undefined;
  /** CORRAL_RETENTION_DAYS. */
  retentionDays?: number | undefined;
  /** Ed25519 key that signs policy envelopes (CORRAL_SIGNING_KEY or DATA_DIR); tools and tests get a throw-away one. */
  signingKey?: string | undefined;
  /** CORRAL_ENCRYPTION_KEY (or DATA_DIR's) for stored secrets; tools and tests get a throw-away one. */
  encryptionKey?: string | undefined;
  /** Where alert notifications go out (CORRAL_SMTP_*, CORRAL_WEBHOOK_ALLOW_PRIVATE, CORRAL_PUBLIC_URL). */
  alerts?: AlertSettings | undefined;
  /** CORRAL_PRICES_FILE's table; the built-in one when absent. */
  prices?: PriceTable | undefined;
  /** Where the OTLP/gRPC listener binds (OTLP_GRPC_PORT; port 0 picks a free one); absent: no listener. */
  otlpGrpc?: { host: string; port: number } | undefined;
  /** CORRAL_BODY_LIMIT_BYTES: also the most a gzip body may inflate to. */
  bodyLimitBytes?: number | undefined;
  /** The built dashboard (a folder with index.html) served at `/` of the main host; none when absent. */
  dashboardDir?: string | undefined;
}

const defaultRateLimits = { free: 60_000, team: 600_000, enterprise: 6_000_000 } as const;

/**
 * The parts that differ by engine, picked here once. The embedded shape keeps the control bus
 * and the rate limiter in memory (one process owns the file) and stores telemetry on a writer
 * thread; PostgreSQL shares both through the database, so they hold across processes, and
 * keeps raw events in day partitions.
 */
function engineAdapters(db: Db, log: Logger, retentionStore: RetentionStore) {
  switch (db.engine) {
    case 'sqlite': {
      const controlBus = createMemoryControlBus(log);
      const telemetryWriter = createSqliteTelemetryWriter(db);
      return {
        controlBus,
        rateLimitStore: createMemoryRateLimitStore(),
        telemetryWriter,
        eventExpiry: createRowEventExpiry(retentionStore),
        partitions: undefined,
        workers: [controlBus, telemetryWriter],
      };
    }
    case 'postgres': {
      const controlBus = createPostgresControlBus(db, log);
      const partitions = createPartitionManager(db.pool);
      return {
        controlBus,
        rateLimitStore: createPostgresRateLimitStore(db),
        telemetryWriter: createPostgresTelemetryWriter(db, partitions),
        eventExpiry: createPartitionEventExpiry(partitions, retentionStore),
        partitions,
        workers: [controlBus],
      };
    }
  }
}

/** The composition root: stores → services → routes and workers, a few lines a feature. */
export async function createContainer(o: ContainerOptions) {
  const { db, clock, log } = o;
  const metrics = createMetrics();
  const retentionStore = createRetentionStore(db);
  const engine = engineAdapters(db, log, retentionStore);

  const orgStore = createOrgStore(db);
  const orgService = createOrgService({ orgStore, clock, defaultPlan: o.defaultPlan });
  const auditStore = createAuditStore(db);
  // Changes reach SDK streams in every process through the control bus (features/control).
  const controlEvents = controlEventsOn(engine.controlBus);

  const apiKeyService = createApiKeyService({ db, apiKeyStore: createApiKeyStore(db), orgStore, auditStore, clock, events: controlEvents });
  const agentService = createAgentService({ db, agentStore: createAgentStore(db), orgStore, auditStore, clock, events: controlEvents });
  const policyService = createPolicyService({ db, policyStore: createPolicyStore(db), auditStore, clock, events: controlEvents });
  const signingService = createSigningService({
    signingKeyStore: createSigningKeyStore(db), clock, key: parseSigningKey(o.signingKey ?? generateSigningKeyPem()),
  });
  const streamHub = createStreamHub({ clock });
  const controlService = createControlService({ policyService, signingService, hub: streamHub, bus: engine.controlBus, clock, log });

  const verifyJwt = await createJwtVerifier(o.jwt);
  const sessionService = createSessionService({ verifyJwt, secret: o.jwt.secret, clock });
  const authenticator = createAuthenticator({ verifyJwt, apiKeyService, orgService, sessions: sessionService });

  const rateLimiter = createRateLimiter({
    store: engine.rateLimitStore, planOf: (orgId) => orgService.planOf(orgId), limits: o.rateLimits ?? defaultRateLimits, clock,
  });
  // Dashboard streams (and through them live tails) hear of new events; see features/control.
  const hintEventsStored = eventsStoredHints(engine.controlBus);
  const storedHints = (orgId: string, rows: readonly { agent_id: string }[]) => hintEventsStored(orgId, rows.map((r) => r.agent_id));
  const ingestService = createIngestService({
    authenticateApiKey: (key) => apiKeyService.authenticate(key),
    rateLimiter,
    writer: engine.telemetryWriter,
    listeners: [(_orgId, rows) => metrics.eventsStored.inc(rows.length), storedHints],
    onBatch: (events, seconds) => {
      metrics.eventsReceived.inc(events);
      metrics.batchDuration.observe(seconds);
    },
    log,
  });
  const retentionDays = o.retentionDays ?? 31;
  const telemetryService = createTelemetryService({ store: createTelemetryStore(db), agentService, clock, retentionDays });
  const dashboardStore = createDashboardStore(db);
  const instanceService = createInstanceService({ instanceStore: createInstanceStore(db), agentService, clock });
  const dashboardService = createDashboardService({ dashboardStore, clock, prices: createPriceBook(o.prices) });
  const bodyLimitBytes = o.bodyLimitBytes ?? 5 * 1024 * 1024;
  const otlpService = createOtlpService({ ingestService, agentService, clock, retentionDays });
  const otlpGrpc = o.otlpGrpc
    ? createOtlpGrpcServer({ otlpService, ingestService, log, ...o.otlpGrpc, maxMessageBytes: bodyLimitBytes })
    : undefined;
  const retention = createRetentionWorker({ retentionStore, eventExpiry: engine.eventExpiry, clock, retentionDays, log });
  const alerts = composeAlerts({
    db, agentService, auditStore, windowStats: createAgentWindowStats({ dashboardStore }), clock, log, settings: o.alerts ?? {},
    secretBox: createSecretBox(parseEncryptionKey(o.encryptionKey ?? generateEncryptionKey())),
    observe: {
      evaluationRound: (lagMs) => {
        metrics.alertEvaluationRounds.inc();
        metrics.alertEvaluationLag.set(lagMs / 1000);
      },
      deliveryAttempt: (outcome) => metrics.alertDeliveryAttempts.inc({ outcome }),
    },
  });
  metrics.gauge('corral_control_streams', 'SDK control streams open on this process', () => streamHub.stats().streams);
  metrics.gauge('corral_control_stream_buffered_bytes', 'Bytes written to control streams and not yet taken by their clients', () => streamHub.stats().bufferedBytes);
  metrics.gauge('corral_alert_outbox_depth', 'Alert notifications waiting for delivery, across the deployment (read from the store)', alerts.outboxDepth);

  const telemetry = (signatureRequired: boolean): RouteModule => (app) =>
    app.register(telemetryRoutes, { ingestService, telemetryService, signatureRequired });
  const apiRoutes: RouteModule[] = [
    (app) => app.register(apiKeyRoutes, { apiKeyService }),
    (app) => app.register(agentRoutes, { agentService }),
    (app) => app.register(auditRoutes, { auditStore }),
    (app) => app.register(policyRoutes, { policyService }),
    (app) => app.register(signingRoutes, { signingService }),
    (app) => app.register(sessionRoutes, { sessionService, verifyJwt }),
    (app) => app.register(controlRoutes, { controlService }),
    (app) => app.register(dashboardRoutes, { dashboardService }),
    (app) => app.register(alertRoutes, { alertService: alerts.alertService }),
    (app) => app.register(instanceRoutes, { instanceService }),
    telemetry(false),
    ...(o.dashboardDir ? [(app: FastifyInstance) => app.register(webUiRoutes, { root: o.dashboardDir ?? '' })] : []),
  ];
  const ingestRoutes: RouteModule[] = [telemetry(true), (app) => app.register(otlpRoutes, { otlpService, ingestService, bodyLimitBytes })];
  // Started in this order and stopped in reverse.
  // The dispatcher starts before the evaluator that feeds it, so it stops after it.
  const workers: Worker[] = [...engine.workers, streamHub, retention, alerts.dispatcher, alerts.evaluator, ...(otlpGrpc ? [otlpGrpc] : [])];

  return {
    db,
    clock,
    metrics,
    orgService,
    auditStore,
    apiKeyService,
    agentService,
    policyService,
    signingService,
    controlService,
    controlBus: engine.controlBus,
    streamHub,
    ingestService,
    telemetryWriter: engine.telemetryWriter,
    dashboardService,
    instanceService,
    otlpService,
    /** The OTLP/gRPC listener (a worker), when configured. */
    otlpGrpc,
    retention,
    alertService: alerts.alertService,
    alertEvaluator: alerts.evaluator,
    alertDispatcher: alerts.dispatcher,
    /** PostgreSQL's raw-event day partitions; undefined on SQLite. */
    partitions: engine.partitions,
    authenticator,
    apiRoutes,
    ingestRoutes,
    workers,
  };
}
export type Container = Awaited<ReturnType<typeof createContainer>>;
