import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

describe.each(testDialects)('the dashboard bundle on the main host, on %s', (dialect) => {
  let ctx: TestContext;
  let withoutUi: TestContext;
  const dir = mkdtempSync(path.join(tmpdir(), 'corral-ui-'));
  beforeAll(async () => {
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Corral</title>');
    writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(path.join(dir, '.env'), 'SECRET=1');
    ctx = await buildTestContext(dialect, { container: { dashboardDir: dir } });
    withoutUi = await buildTestContext(dialect);
  });
  afterAll(async () => {
    await ctx.close();
    await withoutUi.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page at / and at any deep link, with a policy that allows no other origin', async () => {
    for (const url of ['/', '/agents/0190f000-0000-7000-8000-00000000abcd', '/alerts', '/keys?x=1']) {
      const res = await ctx.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<title>Corral</title>');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it('serves hashed assets as immutable, and unknown files as the JSON 404', async () => {
    const asset = await ctx.request({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const missing = await ctx.request({ method: 'GET', url: '/assets/missing.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'not_found' } });
    for (const url of ['/assets/../.env', '/assets/%2e%2e/.env', '/.env']) {
      const res = await ctx.request({ method: 'GET', url });
      expect(res.body, url).not.toContain('SECRET');
    }
  });

  it('keeps unknown /v1/* paths JSON errors and the API itself untouched', async () => {
    for (const url of ['/v1/nope', '/v1/agents/x/y/z', '/v1']) {
      const res = await ctx.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ error: { code: 'not_found' } });
    }
    expect((await ctx.request({ method: 'GET', url: '/v1/agents' })).statusCode).toBe(401);
    expect((await ctx.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await ctx.request({ method: 'POST', url: '/agents' })).statusCode).toBe(404);
  });

  it('answers / with the JSON 404 when no bundle is configured', async () => {
    const res = await withoutUi.request({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
