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
}

/** The composition root: stores → services → routes, one feature a few lines. */
export async function createContainer({ db, clock, jwt, defaultPlan }: ContainerOptions) {
  const orgStore = createOrgStore(db);
  const orgService = createOrgService({ orgStore, clock, defaultPlan });
  const auditStore = createAuditStore(db);

  const apiKeyStore = createApiKeyStore(db);
  const apiKeyService = createApiKeyService({ db, apiKeyStore, orgStore, auditStore, clock });

  const agentStore = createAgentStore(db);
  const agentService = createAgentService({ db, agentStore, orgStore, auditStore, clock });

  const verifyJwt = await createJwtVerifier(jwt);
  const authenticator: Authenticator = createAuthenticator({ verifyJwt, apiKeyService, orgService });

  const apiRoutes: RouteModule[] = [
    (app) => app.register(apiKeyRoutes, { apiKeyService }),
    (app) => app.register(agentRoutes, { agentService }),
    (app) => app.register(auditRoutes, { auditStore }),
  ];
  const ingestRoutes: RouteModule[] = [];
  const workers: Worker[] = [];

  return {
    db,
    clock,
    orgService,
    auditStore,
    apiKeyService,
    agentService,
    authenticator,
    apiRoutes,
    ingestRoutes,
    workers,
  };
}
export type Container = Awaited<ReturnType<typeof createContainer>>;
