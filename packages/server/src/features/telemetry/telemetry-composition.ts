import type { Plan } from '@corral/contracts';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { AgentService } from '../agents/index.js';
import { createDashboardService, createDashboardStore, dashboardRoutes } from '../dashboard/index.js';
import type { OrgService } from '../orgs/index.js';
import { createMemoryRateLimitStore, createPostgresRateLimitStore, createRateLimiter } from '../rate-limits/index.js';
import { createRetentionStore, createRetentionWorker } from '../retention/index.js';
import { telemetryRoutes } from './telemetry-routes.js';
import { createTelemetryService, type TelemetryListener } from './telemetry-service.js';
import { createTelemetryStore } from './telemetry-store.js';

export interface TelemetryCompositionOptions {
  db: Db;
  clock: Clock;
  agentService: Pick<AgentService, 'registerPublicKey'>;
  orgService: Pick<OrgService, 'planOf'>;
  /** Events per minute per organization, by plan. */
  rateLimits: Readonly<Record<Plan, number>>;
  retentionDays: number;
  listeners?: readonly TelemetryListener[];
}

/**
 * Wires ingestion, its rate limiter, the dashboard and retention, so the composition root
 * stays a few lines. The limiter is in-process on SQLite (one process owns the file) and
 * shared through PostgreSQL otherwise, so limits hold across processes.
 */
export function createTelemetryComposition(o: TelemetryCompositionOptions) {
  const telemetryStore = createTelemetryStore(o.db);
  const telemetryService = createTelemetryService({
    store: telemetryStore, agentService: o.agentService, clock: o.clock,
    retentionDays: o.retentionDays, listeners: o.listeners ?? [],
  });
  const rateLimiter = createRateLimiter({
    store: o.db.dialect.name === 'postgres' ? createPostgresRateLimitStore(o.db) : createMemoryRateLimitStore(),
    planOf: (orgId) => o.orgService.planOf(orgId),
    limits: o.rateLimits,
    clock: o.clock,
  });
  const dashboardService = createDashboardService({ dashboardStore: createDashboardStore(o.db), clock: o.clock });
  const retention = createRetentionWorker({
    retentionStore: createRetentionStore(o.db), partitions: telemetryStore.partitions, clock: o.clock, retentionDays: o.retentionDays,
  });
  const ingest = (signatureRequired: boolean) => (app: FastifyInstance) =>
    app.register(telemetryRoutes, { telemetryService, rateLimiter, signatureRequired });
  return {
    telemetryService,
    dashboardService,
    rateLimiter,
    retention,
    apiRoutes: [ingest(false), (app: FastifyInstance) => app.register(dashboardRoutes, { dashboardService })],
    ingestRoutes: [ingest(true)],
    workers: [retention],
  };
}
