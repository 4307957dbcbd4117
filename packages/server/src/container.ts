import type { Plan } from '@corral/contracts';
import type { FastifyInstance } from 'fastify';
import type { Db } from './db/database.js';
import type { Authenticator } from './http/auth.js';
import type { Clock } from './lib/clock.js';
import { agentRoutes, createAgentService, createAgentStore } from './features/agents/index.js';
import { apiKeyRoutes, createApiKeyService, createApiKeyStore } from './features/api-keys/index.js';
import { auditRoutes, createAuditStore } from './features/audit/index.js';
import { createAuthenticator, createJwtVerifier, type JwtSettings } from './features/auth/index.js';
import { createOrgService, createOrgStore } from './features/orgs/index.js';
import { createTelemetryComposition } from './features/telemetry/index.js';
import { controlEventsOn, controlRoutes, createControlBus, createControlService, createStreamHub } from './features/control/index.js';
import { createPolicyService, createPolicyStore, policyRoutes } from './features/policies/index.js';
import { createSessionService, sessionRoutes } from './features/session/index.js';
import {
  createSigningKeyStore, createSigningService, generateSigningKeyPem, parseSigningKey, signingRoutes,
} from './features/signing/index.js';

/** Registers one feature's routes on a host. */
export type RouteModule = (app: FastifyInstance) => PromiseLike<unknown>;

/** Background work (evaluators, retention, buses): started by main, stopped on SIGTERM. */
export interface Worker {
  readonly name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

export interface ContainerOptions {
  db: Db;
  clock: Clock;
  jwt: JwtSettings;
  defaultPlan: Plan;
  /** Ingest events per minute per organization, by plan (CORRAL_RATE_LIMIT_*); contract defaults when absent. */
  rateLimits?: Readonly<Record<Plan, number>> | undefined;
  /** CORRAL_RETENTION_DAYS. */
  retentionDays?: number | undefined;
  /** Ed25519 key that signs policy envelopes (CORRAL_SIGNING_KEY or DATA_DIR); tools and tests get a throw-away one. */
  signingKey?: string | undefined;
}

const defaultRateLimits = { free: 60_000, team: 600_000, enterprise: 6_000_000 } as const;

/** The composition root: stores → services → routes, one feature a few lines. */
export async function createContainer({ db, clock, jwt, defaultPlan, signingKey, rateLimits = defaultRateLimits, retentionDays = 31 }: ContainerOptions) {
  const orgStore = createOrgStore(db);
  const orgService = createOrgService({ orgStore, clock, defaultPlan });
  const auditStore = createAuditStore(db);

  // Changes reach SDK streams in every process through the control bus (features/control).
  const controlBus = createControlBus(db);
  const controlEvents = controlEventsOn(controlBus);

  const apiKeyStore = createApiKeyStore(db);
  const apiKeyService = createApiKeyService({ db, apiKeyStore, orgStore, auditStore, clock, events: controlEvents });

  const agentStore = createAgentStore(db);
  const agentService = createAgentService({ db, agentStore, orgStore, auditStore, clock, events: controlEvents });

  const policyService = createPolicyService({ db, policyStore: createPolicyStore(db), auditStore, clock, events: controlEvents });
  const signingService = createSigningService({
    signingKeyStore: createSigningKeyStore(db), clock, key: parseSigningKey(signingKey ?? generateSigningKeyPem()),
  });
  const streamHub = createStreamHub({ clock });
  const controlService = createControlService({ policyService, signingService, hub: streamHub, bus: controlBus, clock });

  const verifyJwt = await createJwtVerifier(jwt);
  const sessionService = createSessionService({ verifyJwt, secret: jwt.secret, clock });
  const authenticator: Authenticator = createAuthenticator({ verifyJwt, apiKeyService, orgService, cookieSession: sessionService });

  const telemetry = createTelemetryComposition({ db, clock, agentService, orgService, rateLimits, retentionDays });

  const apiRoutes: RouteModule[] = [
    (app) => app.register(apiKeyRoutes, { apiKeyService }),
    (app) => app.register(agentRoutes, { agentService }),
    (app) => app.register(auditRoutes, { auditStore }),
    (app) => app.register(policyRoutes, { policyService }),
    (app) => app.register(signingRoutes, { signingService }),
    (app) => app.register(sessionRoutes, { sessionService, verifyJwt }),
    (app) => app.register(controlRoutes, { controlService, sessionExpiry: (request) => sessionService.expiryOf(request) }),
    ...telemetry.apiRoutes,
  ];
  const ingestRoutes: RouteModule[] = [...telemetry.ingestRoutes];
  const workers: Worker[] = [...telemetry.workers];

  return {
    db,
    clock,
    orgService,
    auditStore,
    apiKeyService,
    agentService,
    policyService,
    signingService,
    controlService,
    controlBus,
    streamHub,
    telemetryService: telemetry.telemetryService,
    dashboardService: telemetry.dashboardService,
    retention: telemetry.retention,
    authenticator,
    apiRoutes,
    ingestRoutes,
    workers,
  };
}
export type Container = Awaited<ReturnType<typeof createContainer>>;
