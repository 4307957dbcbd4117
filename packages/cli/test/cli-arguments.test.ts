import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, claimsOf, runCli } from './helpers/cli-process.js';

beforeAll(() => buildCli(), 120_000);

const ORG = '0190F000-0000-7000-8000-00000000ABCD';
const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-cli-args-'));
const env = { DATA_DIR: dataDir };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('corral help', () => {
  it('lists every command and exits 0', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    for (const name of ['start', 'token', 'org set-plan', 'migrate', 'openapi']) expect(res.stdout).toContain(name);
  });

  it('shows one command with --help, -h or help <command>', async () => {
    for (const args of [['token', '--help'], ['token', '-h'], ['help', 'token']]) {
      const res = await runCli(args);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain('Usage: corral token --org <uuid> --role <role>');
    }
    const plan = await runCli(['help', 'org', 'set-plan']);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('Usage: corral org set-plan <org_id> <plan>');
  });

  it('shows a group of commands with corral org --help, -h or help org', async () => {
    for (const args of [['org', '--help'], ['org', '-h'], ['help', 'org']]) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toContain('Usage: corral org <command>');
      expect(res.stdout).toContain('org set-plan');
    }
  });

  it('prints the version', async () => {
    const res = await runCli(['--version']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('corral token', () => {
  it('prints only the token, with the claims asked for and a one-hour default lifetime', async () => {
    const res = await runCli(['token', '--org', ORG, '--role', 'member', '--sub', 'ada'], env);
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const claims = claimsOf(lines[0] ?? '');
    expect(claims).toMatchObject({ org_id: ORG.toLowerCase(), role: 'member', sub: 'ada' });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
  });

  it('takes --ttl in seconds or with a unit, and reports the token under --json', async () => {
    const res = await runCli(['token', '--org', ORG, '--role', 'viewer', '--ttl', '7d', '--json'], env);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { token: string; org_id: string; role: string; sub: string; expires_at: string };
    const claims = claimsOf(out.token);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(7 * 86_400);
    expect(out).toMatchObject({ org_id: ORG.toLowerCase(), role: 'viewer', sub: claims.sub });
    expect(Date.parse(out.expires_at)).toBe(Number(claims.exp) * 1000);
    const seconds = await runCli(['token', '--org', ORG, '--role', 'owner', '--ttl', '90'], env);
    const short = claimsOf(seconds.stdout.trim());
    expect(Number(short.exp) - Number(short.iat)).toBe(90);
  });

  it('keeps the generated secret in DATA_DIR, readable by its owner only', async () => {
    await runCli(['token', '--org', ORG, '--role', 'admin'], env);
    const file = path.join(dataDir, 'jwt-secret');
    expect(readFileSync(file, 'utf8').trim().length).toBeGreaterThanOrEqual(32);
    const { statSync } = await import('node:fs');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('bad input exits 2 with a message on stderr', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['no command', [], /a command is required/],
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['org without a subcommand', ['org'], /subcommand is required.*org set-plan/],
    ['an unknown org subcommand', ['org', 'delete'], /unknown subcommand "delete"/],
    ['token without --org', ['token', '--role', 'admin'], /--org is required/],
    ['token without --role', ['token', '--org', ORG], /--role is required/],
    ['token with a bad uuid', ['token', '--org', 'not-a-uuid', '--role', 'admin'], /--org must be a UUID/],
    ['token with an unknown role', ['token', '--org', ORG, '--role', 'superuser'], /--role must be one of viewer, member, admin, owner/],
    ['token with a zero ttl', ['token', '--org', ORG, '--role', 'admin', '--ttl', '0'], /--ttl must be a duration/],
    ['token with an unknown ttl unit', ['token', '--org', ORG, '--role', 'admin', '--ttl', '3y'], /--ttl must be a duration/],
    ['token with a ttl over a year', ['token', '--org', ORG, '--role', 'admin', '--ttl', '366d'], /--ttl must be a duration/],
    ['token with an empty --sub', ['token', '--org', ORG, '--role', 'admin', '--sub', ' '], /--sub must be/],
    ['token with an unknown option', ['token', '--org', ORG, '--role', 'admin', '--scope', 'all'], /Unknown option '--scope'/],
    ['token with a missing option value', ['token', '--role', 'admin', '--org'], /--org/],
    ['token with a stray argument', ['token', 'extra', '--org', ORG, '--role', 'admin'], /token takes no arguments/],
    ['set-plan without arguments', ['org', 'set-plan'], /takes <org_id> <plan>, got none/],
    ['set-plan without a plan', ['org', 'set-plan', ORG], /takes <org_id> <plan>/],
    ['set-plan with a bad uuid', ['org', 'set-plan', '1234', 'team'], /org_id must be a UUID/],
    ['set-plan with an unknown plan', ['org', 'set-plan', ORG, 'platinum'], /plan must be one of free, team, enterprise/],
    ['set-plan with an extra argument', ['org', 'set-plan', ORG, 'team', 'now'], /takes <org_id> <plan>/],
    ['migrate with an argument', ['migrate', 'down'], /migrate takes no arguments/],
    ['start with an unknown role', ['start', '--role', 'everything'], /--role must be one of all, api, ingest, worker, got "everything"/],
  ];

  // Independent processes: run a few at once.
  it.concurrent.each(cases)('%s', async (_name, args, message) => {
    const res = await runCli(args, env);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe('');
  });

  it('reports a bad configuration variable as bad input, naming it', async () => {
    const res = await runCli(['migrate'], { ...env, PORT: 'eighty' });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/Invalid configuration:[\s\S]*PORT/);
    const start = await runCli(['start'], { ...env, DATABASE_URL: 'mysql://localhost/corral' });
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(/DATABASE_URL/);
    // --role stands above CORRAL_ROLE: a worker on PostgreSQL without the deployment's shared secrets does not start.
    const worker = await runCli(['start', '--role', 'worker'], { ...env, CORRAL_ROLE: 'all', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/corral' });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toMatch(/CORRAL_ENCRYPTION_KEY: required when CORRAL_ROLE=worker runs on PostgreSQL/);
  });

  it('writes errors as JSON under --json, in the API error shape', async () => {
    const res = await runCli(['token', '--org', 'nope', '--role', 'admin', '--json'], env);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stderr)).toEqual({ error: { code: 'usage', message: '--org must be a UUID, got "nope"' } });
  });
});

describe('a failed run exits 1', () => {
  it('when the store cannot be reached', async () => {
    const res = await runCli(['migrate', '--json'], { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/corral' });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stderr)).toMatchObject({ error: { code: 'failed' } });
  });
});

describe('corral openapi', () => {
  it('writes the OpenAPI 3.1 document without touching DATA_DIR', async () => {
    const untouched = path.join(dataDir, 'never-created');
    const out = path.join(dataDir, 'openapi.json');
    const res = await runCli(['openapi', '--out', out, '--json'], { DATA_DIR: untouched });
    expect(res.code).toBe(0);
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/keys', '/v1/agents', '/v1/agents/{agent_id}/kill-switch', '/v1/audit-log']));
    expect(JSON.parse(res.stdout)).toEqual({ file: out, paths: Object.keys(doc.paths).length });
    expect(existsSync(untouched)).toBe(false);
  });
});

describe('--help on every command', () => {
  it('prints the usage of each command the program has, with exit code 0 (in process, from the same tree)', async () => {
    const { buildProgram, leavesOf, pathOf } = await import('../src/program.js');
    const { CommanderError } = await import('commander');
    const leaves = leavesOf(buildProgram());
    expect(leaves.length).toBeGreaterThan(40);
    for (const leaf of leaves) {
      let text = '';
      const path = pathOf(leaf);
      const program = buildProgram({ writeOut: (s) => (text += s) });
      const err = await program.parseAsync([...path.split(' '), '--help'], { from: 'user' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, path).toBeInstanceOf(CommanderError);
      expect((err as InstanceType<typeof CommanderError>).exitCode, path).toBe(0);
      expect(text, path).toContain(`Usage: corral ${path}`);
      expect(text, path).toContain(leaf.description().slice(0, 30));
    }
  });
});
