import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, TEST_JWT_SECRET, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);
const claims = (extra: JWTPayload = {}): JWTPayload => ({ sub: 'alice', org_id: randomUUID(), role: 'owner', exp: nowSeconds() + 600, ...extra });

/** An HS256 token with exactly the claims given (no defaults added by the signer). */
const hs256 = (payload: JWTPayload, secret = TEST_JWT_SECRET) =>
  new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));

describe.each(testDialects)('JWT authentication on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect, { plan: 'team' });
  });
  afterAll(() => ctx.close());

  const call = (authorization: string) => ctx.request({ method: 'GET', url: '/v1/agents', headers: { authorization } });
  const expect401 = async (token: string, why: string) => {
    const res = await call(`Bearer ${token}`);
    expect(res.statusCode, why).toBe(401);
    expect(res.json().error.code, why).toBe('unauthorized');
  };

  it('accepts an HS256 token signed with the secret', async () => {
    const res = await call(`Bearer ${await hs256(claims())}`);
    expect(res.statusCode).toBe(200);
  });

  it('refuses alg none, tampering, a wrong secret, and missing or expired exp', async () => {
    const good = await hs256(claims({ role: 'viewer' }));
    const [header, , signature] = good.split('.');
    await expect401(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims())}.`, 'alg none');
    await expect401(`${b64url({ alg: 'none' })}.${b64url(claims())}.${signature}`, 'alg none with a signature');
    await expect401(`${header}.${b64url(claims({ role: 'owner' }))}.${signature}`, 'payload swapped under a valid signature');
    await expect401(await hs256(claims(), 'another-secret-that-is-long-enough-0123456789'), 'wrong secret');
    const { exp: _exp, ...noExp } = claims();
    await expect401(await hs256(noExp), 'no exp');
    await expect401(await hs256(claims({ exp: nowSeconds() - 5 })), 'expired');
    await expect401(await hs256(claims({ nbf: nowSeconds() + 600 })), 'not yet valid');
  });

  it('refuses asymmetric algorithms when only the secret is configured (algorithm confusion)', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const es = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
    await expect401(es, 'ES256 with no public key configured');
    await expect401(`${b64url({ alg: 'HS512' })}.${b64url(claims())}.${'A'.repeat(86)}`, 'HS512');
  });

  it('refuses bad role, org_id and sub claims', async () => {
    await expect401(await hs256(claims({ role: 'superuser' })), 'unknown role');
    await expect401(await hs256(claims({ role: undefined })), 'no role');
    await expect401(await hs256(claims({ role: ['owner'] as unknown as string })), 'role array');
    await expect401(await hs256(claims({ org_id: 'acme' })), 'org_id not a UUID');
    await expect401(await hs256(claims({ org_id: undefined })), 'no org_id');
    await expect401(await hs256(claims({ org_id: 42 })), 'numeric org_id');
    await expect401(await hs256(claims({ sub: undefined })), 'no sub');
  });

  it('refuses malformed Authorization headers', async () => {
    for (const header of ['Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a.b.c', 'Bearer not-a-jwt', `Token ${await hs256(claims())}`]) {
      const res = await call(header);
      expect(res.statusCode, header).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
    }
    const none = await ctx.request({ method: 'GET', url: '/v1/agents' });
    expect(none.statusCode).toBe(401);
  });

  it('creates an organization on the first valid JWT, with the default plan, and never resets it', async () => {
    const orgId = randomUUID();
    const row = () => ctx.testDb.db.kysely.selectFrom('organizations').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    await call(`Bearer ${await hs256(claims({ org_id: orgId, exp: nowSeconds() - 5 }))}`);
    expect(await row()).toBeUndefined();
    expect((await call(`Bearer ${await hs256(claims({ org_id: orgId }))}`)).statusCode).toBe(200);
    expect(await row()).toMatchObject({ org_id: orgId, plan: 'team' });
    await ctx.container.orgService.setPlan(orgId, 'enterprise');
    await call(`Bearer ${await hs256(claims({ org_id: orgId }))}`);
    expect((await row())?.plan).toBe('enterprise');
  });

  it('reads an upper-case org_id as the same organization', async () => {
    const orgId = randomUUID();
    const lower = await hs256(claims({ org_id: orgId }));
    const upper = await hs256(claims({ org_id: orgId.toUpperCase() }));
    const created = await ctx.request({ method: 'POST', url: '/v1/agents', headers: { authorization: `Bearer ${upper}` }, payload: { name: 'Case' } });
    expect(created.json().org_id).toBe(orgId);
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${created.json().id}`, headers: { authorization: `Bearer ${lower}` } })).statusCode).toBe(200);
  });
});

describe.each(testDialects)('asymmetric JWT verification on %s', (dialect) => {
  for (const alg of ['EdDSA', 'ES256', 'RS256'] as const) {
    describe(alg, () => {
      let ctx: TestContext;
      let privateKey: CryptoKey;
      let publicPem: string;
      beforeAll(async () => {
        const pair = await generateKeyPair(alg);
        privateKey = pair.privateKey;
        publicPem = await exportSPKI(pair.publicKey);
        ctx = await buildTestContext(dialect, { jwt: { publicKeyPem: publicPem } });
      });
      afterAll(() => ctx.close());

      const call = (token: string) => ctx.request({ method: 'GET', url: '/v1/agents', token });

      it('accepts tokens signed by the identity provider key, alongside HS256', async () => {
        expect((await call(await new SignJWT(claims()).setProtectedHeader({ alg }).sign(privateKey))).statusCode).toBe(200);
        expect((await call(await hs256(claims()))).statusCode).toBe(200);
      });

      it('refuses another key, an expired token, and HS256 keyed with the public key text', async () => {
        const stranger = (await generateKeyPair(alg)).privateKey;
        expect((await call(await new SignJWT(claims()).setProtectedHeader({ alg }).sign(stranger))).statusCode).toBe(401);
        expect((await call(await new SignJWT(claims({ exp: nowSeconds() - 5 })).setProtectedHeader({ alg }).sign(privateKey))).statusCode).toBe(401);
        expect((await call(await hs256(claims(), publicPem))).statusCode).toBe(401);
      });
    });
  }
});

describe('JWKS verification', () => {
  let server: Server;
  let ctx: TestContext;
  let privateKey: CryptoKey;
  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    ctx = await buildTestContext('sqlite', { jwt: { jwksUrl: `http://127.0.0.1:${port}/jwks.json` } });
  });
  afterAll(async () => {
    await ctx.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('accepts tokens whose key the JWKS publishes and refuses others', async () => {
    const good = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
    expect((await ctx.request({ method: 'GET', url: '/v1/agents', token: good })).statusCode).toBe(200);
    const stranger = (await generateKeyPair('ES256')).privateKey;
    const bad = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(stranger);
    expect((await ctx.request({ method: 'GET', url: '/v1/agents', token: bad })).statusCode).toBe(401);
  });
});
