// Sends a signed telemetry batch the way an SDK does (contract section 7), with Node alone.
//
//   CORRAL_INGEST_URL=http://127.0.0.1:4318 CORRAL_API_KEY=crl_live_… CORRAL_AGENT=<agent id> \
//     node docs/examples/sign-batch.mjs [key-file]
//
// The agent's Ed25519 key is kept in key-file (default ./agent-key.pem, created on first use).
// The first signed batch registers the public key (x-corral-public-key); later batches are
// verified against it, and a batch signed with another key is refused with 401.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const { CORRAL_INGEST_URL: ingestUrl = 'http://127.0.0.1:4318', CORRAL_API_KEY: apiKey, CORRAL_AGENT: agentId } = process.env;
if (!apiKey || !agentId) throw new Error('Set CORRAL_API_KEY and CORRAL_AGENT');
const keyFile = process.argv[2] ?? 'agent-key.pem';

if (!existsSync(keyFile)) {
  const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
  writeFileSync(keyFile, pem, { mode: 0o600 });
}
const privateKey = createPrivateKey(readFileSync(keyFile));
// The raw 32-byte public key is the last 32 bytes of its DER SubjectPublicKeyInfo.
const publicKeyHex = createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');

const body = JSON.stringify({
  sdk_version: 'sign-batch-example/1.0',
  events: [{
    agent_id: agentId, timestamp: new Date().toISOString(), request_id: randomUUID(), method: 'GET',
    url_host: 'api.github.com', url_path: '/repos/{id}', status_code: 200, latency_ms: 87, policy_result: 'allowed',
  }],
});
// The signature covers the exact bytes sent: sign the string you send, not an object.
const signature = sign(null, Buffer.from(body), privateKey).toString('hex');

const res = await fetch(`${ingestUrl}/v1/telemetry`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'x-api-key': apiKey,
    'x-corral-signature': signature,
    'x-corral-public-key': publicKeyHex,
  },
  body,
});
console.log(res.status, await res.text());
if (!res.ok) process.exitCode = 1;
