import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('uses the documented defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      ingestPort: 4318,
      host: '127.0.0.1',
      dataDir: path.resolve('./data'),
      databaseUrl: undefined,
      databasePoolSize: 10,
      role: 'all',
      jwt: { secret: undefined, jwksUrl: undefined, publicKeyPem: undefined, issuer: undefined, audience: undefined },
      defaultPlan: 'free',
      signingKey: undefined,
      rateLimits: { free: 60_000, team: 600_000, enterprise: 6_000_000 },
      retentionDays: 31,
      bodyLimitBytes: 5 * 1024 * 1024,
      logLevel: 'info',
      alerts: { smtpUrl: undefined, smtpFrom: 'Corral <alerts@localhost>', webhookAllowPrivate: false, publicUrl: 'http://127.0.0.1:8080' },
      encryptionKey: undefined,
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.jwt)).toBe(true);
    expect(Object.isFrozen(config.rateLimits)).toBe(true);
  });

  it('parses every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      INGEST_PORT: '9001',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/corral',
      DATABASE_URL: 'postgres://corral@db:5432/corral',
      DATABASE_POOL_SIZE: '25',
      CORRAL_ROLE: 'ingest',
      CORRAL_JWT_SECRET: 's'.repeat(32),
      CORRAL_JWT_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
      CORRAL_JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\\nMCowBQYDK2VwAyEA\\n-----END PUBLIC KEY-----',
      CORRAL_JWT_ISSUER: 'https://idp.example.com/',
      CORRAL_JWT_AUDIENCE: 'corral',
      CORRAL_DEFAULT_PLAN: 'team',
      CORRAL_SIGNING_KEY: 'c2lnbmluZy1rZXk',
      CORRAL_RATE_LIMIT_FREE: '100',
      CORRAL_RATE_LIMIT_TEAM: '1000',
      CORRAL_RATE_LIMIT_ENTERPRISE: '10000',
      CORRAL_RETENTION_DAYS: '7',
      CORRAL_BODY_LIMIT_BYTES: '1048576',
      CORRAL_SMTP_URL: 'smtps://alerts:pw@mail.example.com:465',
      CORRAL_SMTP_FROM: 'Corral <alerts@example.com>',
      CORRAL_WEBHOOK_ALLOW_PRIVATE: '1',
      CORRAL_PUBLIC_URL: 'https://corral.example.com/',
      CORRAL_ENCRYPTION_KEY: 'ab'.repeat(32),
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 9000,
      ingestPort: 9001,
      host: '0.0.0.0',
      dataDir: '/var/lib/corral',
      databaseUrl: 'postgres://corral@db:5432/corral',
      databasePoolSize: 25,
      role: 'ingest',
      jwt: {
        secret: 's'.repeat(32),
        jwksUrl: 'https://idp.example.com/.well-known/jwks.json',
        // A PEM in one env line keeps its line breaks as `\n`.
        publicKeyPem: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----',
        issuer: 'https://idp.example.com/',
        audience: 'corral',
      },
      defaultPlan: 'team',
      signingKey: 'c2lnbmluZy1rZXk',
      rateLimits: { free: 100, team: 1000, enterprise: 10_000 },
      retentionDays: 7,
      bodyLimitBytes: 1_048_576,
      logLevel: 'debug',
      alerts: { smtpUrl: 'smtps://alerts:pw@mail.example.com:465', smtpFrom: 'Corral <alerts@example.com>', webhookAllowPrivate: true, publicUrl: 'https://corral.example.com' },
      encryptionKey: 'ab'.repeat(32),
    });
  });

  it('links notifications to the bound address when CORRAL_PUBLIC_URL is unset, a wildcard bind read as localhost', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).alerts.publicUrl).toBe('http://localhost:9000');
    expect(loadConfig({ HOST: '::1' }).alerts.publicUrl).toBe('http://[::1]:8080');
  });

  it('accepts both PostgreSQL URL schemes and resolves a relative DATA_DIR', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db' }).databaseUrl).toBe('postgresql://h/db');
    expect(loadConfig({ DATA_DIR: 'var/data' }).dataDir).toBe(path.resolve('var/data'));
  });

  it('treats empty values as unset and ignores unrelated variables', () => {
    const config = loadConfig({ PORT: '', DATABASE_URL: '', CORRAL_DEFAULT_PLAN: '', HOME: '/root', PATH: '/bin' });
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.defaultPlan).toBe('free');
  });

  it('lists every bad variable together, naming each', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      INGEST_PORT: '70000',
      DATABASE_URL: 'mysql://db/corral',
      DATABASE_POOL_SIZE: '0',
      CORRAL_ROLE: 'everything',
      CORRAL_JWT_SECRET: 'too-short',
      CORRAL_JWT_JWKS_URL: 'ftp://idp/jwks',
      CORRAL_DEFAULT_PLAN: 'gold',
      CORRAL_RATE_LIMIT_TEAM: '-5',
      CORRAL_RETENTION_DAYS: '1.5',
      CORRAL_SMTP_URL: 'http://mail.example.com',
      CORRAL_WEBHOOK_ALLOW_PRIVATE: 'yes',
      CORRAL_PUBLIC_URL: 'corral.example.com',
      CORRAL_ENCRYPTION_KEY: 'not-32-bytes',
      LOG_LEVEL: 'loud',
    });
    const named = (name: string) => problems.some((p) => p.startsWith(`${name}:`));
    for (const name of [
      'PORT', 'INGEST_PORT', 'DATABASE_URL', 'DATABASE_POOL_SIZE', 'CORRAL_ROLE', 'CORRAL_JWT_SECRET', 'CORRAL_JWT_JWKS_URL',
      'CORRAL_DEFAULT_PLAN', 'CORRAL_RATE_LIMIT_TEAM', 'CORRAL_RETENTION_DAYS', 'CORRAL_SMTP_URL', 'CORRAL_WEBHOOK_ALLOW_PRIVATE',
      'CORRAL_PUBLIC_URL', 'CORRAL_ENCRYPTION_KEY', 'LOG_LEVEL',
    ]) {
      expect(named(name), `${name} in ${problems.join(' | ')}`).toBe(true);
    }
  });

  it('refuses numbers not written as plain digits instead of reading them wrongly', () => {
    for (const value of ['1e6', '1.5', 'true', '0x10', ' 7', '7kb']) {
      const problems = problemsOf({ CORRAL_BODY_LIMIT_BYTES: value, PORT: value });
      expect(problems, value).toEqual(expect.arrayContaining([expect.stringMatching(/^CORRAL_BODY_LIMIT_BYTES:/), expect.stringMatching(/^PORT:/)]));
    }
  });

  it('refuses a split role on PostgreSQL without the secrets every process must share, naming each', () => {
    const pg = { DATABASE_URL: 'postgres://corral@db:5432/corral' };
    const shared = { CORRAL_JWT_SECRET: 's'.repeat(32), CORRAL_SIGNING_KEY: 'c2lnbmluZy1rZXk', CORRAL_ENCRYPTION_KEY: 'ab'.repeat(32) };
    for (const role of ['api', 'ingest', 'worker']) {
      const problems = problemsOf({ ...pg, CORRAL_ROLE: role });
      expect(problems.map((p) => p.split(':')[0])).toEqual(['CORRAL_JWT_SECRET', 'CORRAL_SIGNING_KEY', 'CORRAL_ENCRYPTION_KEY']);
      expect(problems[2]).toContain(`required when CORRAL_ROLE=${role} runs on PostgreSQL`);
      expect(problemsOf({ ...pg, ...shared, CORRAL_ENCRYPTION_KEY: '', CORRAL_ROLE: role })).toEqual([
        expect.stringMatching(/^CORRAL_ENCRYPTION_KEY: required/),
      ]);
      expect(loadConfig({ ...pg, ...shared, CORRAL_ROLE: role }).role).toBe(role);
    }
    // One process owns its DATA_DIR and its generated secrets: the embedded and single-process shapes.
    expect(loadConfig({ ...pg }).role).toBe('all');
    expect(loadConfig({ CORRAL_ROLE: 'api' }).role).toBe('api');
  });

  it('explains itself in the error message', () => {
    expect(() => loadConfig({ PORT: '-1' })).toThrow(/Invalid configuration:[\s\S]*PORT/);
  });
});

describe('loadConfig: OTLP settings', () => {
  it('listens for OTLP/gRPC on 4317 unless OTLP_GRPC_PORT moves it or 0 turns it off', () => {
    expect(loadConfig({}).otlpGrpcPort).toBe(4317);
    expect(loadConfig({ OTLP_GRPC_PORT: '14317' }).otlpGrpcPort).toBe(14317);
    expect(loadConfig({ OTLP_GRPC_PORT: '0' }).otlpGrpcPort).toBeUndefined();
    expect(problemsOf({ OTLP_GRPC_PORT: '70000' })[0]).toMatch(/^OTLP_GRPC_PORT/);
  });

  it('reads and checks CORRAL_PRICES_FILE at start-up', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'corral-prices-'));
    try {
      const good = path.join(dir, 'good.json');
      const entry = { model: 'my-model*', input_per_million: 1, output_per_million: 2, effective_date: '2026-01-01' };
      writeFileSync(good, JSON.stringify([entry]));
      expect(loadConfig({ CORRAL_PRICES_FILE: good }).prices).toEqual([entry]);
      expect(loadConfig({}).prices).toBeUndefined();
      const documented = path.resolve(import.meta.dirname, '../../../docs/examples/prices.json');
      expect(loadConfig({ CORRAL_PRICES_FILE: documented }).prices).toHaveLength(2);
      const bad = path.join(dir, 'bad.json');
      writeFileSync(bad, JSON.stringify([{ ...entry, effective_date: 'yesterday' }]));
      expect(problemsOf({ CORRAL_PRICES_FILE: bad })[0]).toMatch(/^CORRAL_PRICES_FILE: \/0\/effective_date/);
      expect(problemsOf({ CORRAL_PRICES_FILE: path.join(dir, 'missing.json') })[0]).toMatch(/^CORRAL_PRICES_FILE: cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
