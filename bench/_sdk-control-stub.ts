import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pae, POLICY_BUNDLE_TYPE } from '../packages/sdk/src/envelope.js';

/**
 * A local control endpoint for the SDK overhead benchmark: policy keys, and a control stream
 * whose `init` carries a signed bundle of the given policy. No network beyond loopback, once.
 */
export async function startControlStub(policy: unknown): Promise<{ url: string; agentId: string; close(): Promise<void> }> {
  const agentId = randomUUID();
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicHex = publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
  const payload = Buffer.from(JSON.stringify({ agent_id: agentId, version: 1, sequence: 1, hash: `sha256:${'1'.repeat(64)}`, issued_at: new Date().toISOString(), policy }));
  const envelope = { payloadType: POLICY_BUNDLE_TYPE, payload: payload.toString('base64'), signatures: [{ keyid: 'bench', sig: sign(null, pae(POLICY_BUNDLE_TYPE, payload), privateKey).toString('base64') }] };
  const server = createServer((req, res) => {
    if (req.url === '/v1/policy-keys') return void res.end(JSON.stringify({ keys: [{ keyid: 'bench', algorithm: 'ed25519', public_key: publicHex }] }));
    if (req.url?.endsWith('/control')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.write(`event: init\ndata: ${JSON.stringify({ kill_switch_active: false, active_policy_hash: null, policy_envelope: envelope })}\n\n`);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    agentId,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
