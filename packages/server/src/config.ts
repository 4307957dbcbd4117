import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { plans, PriceTable } from '@corral/contracts';
import { parseEncryptionKey } from './lib/secret-box.js';

/**
 * The only module that reads the environment. Every variable is listed in `.env.example` and
 * `docs/configuration.md`; `loadConfig` fails at start-up naming every bad one.
 */
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const PositiveInt = Type.Integer({ minimum: 1 });

const EnvSchema = Type.Object({
  PORT: Type.Optional(Port),
  INGEST_PORT: Type.Optional(Port),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  // Unset: embedded SQLite in DATA_DIR. postgres://… : PostgreSQL.
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Optional(PositiveInt),
  // Which parts this process runs; `all` is the embedded shape (ARCHITECTURE.md, "three shapes").
  CORRAL_ROLE: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('ingest'), Type.Literal('worker')])),
  CORRAL_JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  CORRAL_JWT_JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  CORRAL_JWT_PUBLIC_KEY: Type.Optional(Type.String({ minLength: 1 })),
  CORRAL_JWT_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  CORRAL_JWT_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  CORRAL_DEFAULT_PLAN: Type.Optional(Type.Union(plans.map((p) => Type.Literal(p)))),
  CORRAL_SIGNING_KEY: Type.Optional(Type.String({ minLength: 1 })),
  CORRAL_RATE_LIMIT_FREE: Type.Optional(PositiveInt),
  CORRAL_RATE_LIMIT_TEAM: Type.Optional(PositiveInt),
  CORRAL_RATE_LIMIT_ENTERPRISE: Type.Optional(PositiveInt),
  CORRAL_RETENTION_DAYS: Type.Optional(PositiveInt),
  // Alert notifications (docs/alerts.md). Unset SMTP: email notifications fail, and say why.
  CORRAL_SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  CORRAL_SMTP_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
  // Webhooks to private, loopback, link-local and unique-local addresses are refused unless 1.
  CORRAL_WEBHOOK_ALLOW_PRIVATE: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')])),
  // Where people reach the main API host; links in notifications start with it.
  CORRAL_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' })),
  // 32 bytes (hex or base64) that encrypt stored secrets; generated into DATA_DIR when unset.
  CORRAL_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
  // Largest accepted request body. 1,000 events of ~1 KB fit in the default with room to spare.
  CORRAL_BODY_LIMIT_BYTES: Type.Optional(PositiveInt),
  // OTLP/gRPC listener of the ingest role (docs/otlp.md); 4317 is the standard OTLP/gRPC port, 0 turns it off.
  OTLP_GRPC_PORT: Type.Optional(Port),
  // A JSON price table that replaces the built-in one for token costs (docs/otlp.md, "Prices").
  CORRAL_PRICES_FILE: Type.Optional(Type.String({ minLength: 1 })),
  // The built dashboard served at / of the main host; default packages/dashboard/dist (npm run build).
  CORRAL_DASHBOARD_DIR: Type.Optional(Type.String({ minLength: 1 })),
  LOG_LEVEL: Type.Optional(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  ),
});
type Env = Static<typeof EnvSchema>;

export type ServiceRole = 'all' | 'api' | 'ingest' | 'worker';

export interface Config {
  readonly port: number;
  readonly ingestPort: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly databasePoolSize: number;
  readonly role: ServiceRole;
  readonly jwt: {
    readonly secret: string | undefined;
    readonly jwksUrl: string | undefined;
    readonly publicKeyPem: string | undefined;
    readonly issuer: string | undefined;
    readonly audience: string | undefined;
  };
  readonly defaultPlan: (typeof plans)[number];
  readonly signingKey: string | undefined;
  /** Ingest events per minute per organization, by plan (contract section 5). */
  readonly rateLimits: { readonly free: number; readonly team: number; readonly enterprise: number };
  readonly retentionDays: number;
  readonly alerts: {
    readonly smtpUrl: string | undefined;
    readonly smtpFrom: string;
    readonly webhookAllowPrivate: boolean;
    /** No trailing slash. */
    readonly publicUrl: string;
  };
  /** CORRAL_ENCRYPTION_KEY as given (checked), or undefined to use the one in DATA_DIR. */
  readonly encryptionKey: string | undefined;
  readonly bodyLimitBytes: number;
  /** OTLP_GRPC_PORT; undefined when 0 (off). */
  readonly otlpGrpcPort: number | undefined;
  /** CORRAL_PRICES_FILE, read and checked at start-up; undefined uses the built-in table. */
  readonly prices: PriceTable | undefined;
  readonly logLevel: string;
  /** Folder of the built dashboard; undefined when it has not been built (then `/` is a 404). */
  readonly dashboardDir: string | undefined;
}

/** The operator's price table: a JSON array of ModelPrice entries, checked at start-up. */
function readPriceTable(file: string, problems: string[]): PriceTable | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    problems.push(`CORRAL_PRICES_FILE: cannot read ${file} as JSON (${(err as Error).message})`);
    return undefined;
  }
  const errors = [...Value.Errors(PriceTable, parsed)].slice(0, 5);
  for (const e of errors) problems.push(`CORRAL_PRICES_FILE: ${e.path || '(root)'} ${e.message}`);
  return errors.length === 0 ? (parsed as PriceTable) : undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/**
 * Parses the environment once. Empty strings count as unset, so `FOO=` in a .env file is harmless.
 * `overrides` are command-line flags that stand in for a variable (`corral start --role`).
 */
export function loadConfig(
  environment: Record<string, string | undefined> = process.env,
  overrides: Readonly<Record<string, string>> = {},
): Config {
  const env = { ...environment, ...overrides };
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, schema] of Object.entries(EnvSchema.properties)) {
    const value = env[key];
    if (value === undefined || value === '') continue;
    // Value.Convert reads "1e6" as 1 and "true" as 1; a number must be written as digits.
    if (schema.type === 'integer' && !/^-?\d+$/.test(value)) problems.push(`${key}: Expected a whole number, got "${value}"`);
    else raw[key] = value;
  }
  const converted = Value.Convert(EnvSchema, raw);
  problems.push(...[...Value.Errors(EnvSchema, converted)].map((e) => `${e.path.slice(1) || '(root)'}: ${e.message}`));
  const encryptionKey = env.CORRAL_ENCRYPTION_KEY || undefined;
  if (encryptionKey !== undefined) {
    try {
      parseEncryptionKey(encryptionKey);
    } catch (err) {
      problems.push(`CORRAL_ENCRYPTION_KEY: ${(err as Error).message}`);
    }
  }
  const pricesFile = env.CORRAL_PRICES_FILE || undefined;
  const prices = pricesFile === undefined ? undefined : readPriceTable(pricesFile, problems);
  if (problems.length === 0) problems.push(...sharedSecretProblems(converted as Env));
  if (problems.length > 0) throw new ConfigError(problems);
  const e = converted as Env;
  const otlpGrpcPort = e.OTLP_GRPC_PORT ?? 4317;
  const host = e.HOST ?? '127.0.0.1';
  const port = e.PORT ?? 8080;
  return Object.freeze({
    port,
    ingestPort: e.INGEST_PORT ?? 4318,
    host,
    dataDir: path.resolve(e.DATA_DIR ?? './data'),
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE ?? 10,
    role: e.CORRAL_ROLE ?? 'all',
    jwt: Object.freeze({
      secret: e.CORRAL_JWT_SECRET,
      jwksUrl: e.CORRAL_JWT_JWKS_URL,
      publicKeyPem: e.CORRAL_JWT_PUBLIC_KEY?.replace(/\\n/g, '\n'),
      issuer: e.CORRAL_JWT_ISSUER,
      audience: e.CORRAL_JWT_AUDIENCE,
    }),
    defaultPlan: e.CORRAL_DEFAULT_PLAN ?? 'free',
    signingKey: e.CORRAL_SIGNING_KEY,
    rateLimits: Object.freeze({
      free: e.CORRAL_RATE_LIMIT_FREE ?? 60_000,
      team: e.CORRAL_RATE_LIMIT_TEAM ?? 600_000,
      enterprise: e.CORRAL_RATE_LIMIT_ENTERPRISE ?? 6_000_000,
    }),
    retentionDays: e.CORRAL_RETENTION_DAYS ?? 31,
    alerts: Object.freeze({
      smtpUrl: e.CORRAL_SMTP_URL,
      smtpFrom: e.CORRAL_SMTP_FROM ?? 'Corral <alerts@localhost>',
      webhookAllowPrivate: e.CORRAL_WEBHOOK_ALLOW_PRIVATE === '1',
      publicUrl: (e.CORRAL_PUBLIC_URL ?? defaultPublicUrl(host, port)).replace(/\/+$/, ''),
    }),
    encryptionKey: e.CORRAL_ENCRYPTION_KEY,
    bodyLimitBytes: e.CORRAL_BODY_LIMIT_BYTES ?? 5 * 1024 * 1024,
    otlpGrpcPort: otlpGrpcPort === 0 ? undefined : otlpGrpcPort,
    prices,
    logLevel: e.LOG_LEVEL ?? 'info',
    dashboardDir: dashboardDirOf(e.CORRAL_DASHBOARD_DIR),
  });
}

/** src/ and dist/ both sit one level below packages/server, so the bundle is two levels up. */
const bundledDashboard = fileURLToPath(new URL('../../dashboard/dist', import.meta.url));

function dashboardDirOf(configured: string | undefined): string | undefined {
  const dir = path.resolve(configured ?? bundledDashboard);
  return existsSync(path.join(dir, 'index.html')) ? dir : undefined;
}

/**
 * A process in a split role (api, ingest, worker) on PostgreSQL is one of several: each would
 * otherwise generate its own secrets into its own DATA_DIR, and then a token works on one
 * process only, an SDK refuses envelopes signed by the others, and a webhook secret sealed by an
 * API process cannot be opened by the worker that delivers it. So these must be given, the same
 * to every process (docs/deployment.md, "What every process must share").
 */
function sharedSecretProblems(e: Env): string[] {
  const role = e.CORRAL_ROLE ?? 'all';
  if (role === 'all' || e.DATABASE_URL === undefined) return [];
  const missing = (['CORRAL_JWT_SECRET', 'CORRAL_SIGNING_KEY', 'CORRAL_ENCRYPTION_KEY'] as const).filter((name) => e[name] === undefined);
  return missing.map((name) => `${name}: required when CORRAL_ROLE=${role} runs on PostgreSQL; give every process of the deployment the same value`);
}

/** Without CORRAL_PUBLIC_URL, the address the main host listens on; a wildcard bind reads as localhost. */
function defaultPublicUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}
