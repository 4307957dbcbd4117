import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The agent's Ed25519 key: read from `keyFile`, or generated there (mode 0600) on first use. */
export interface AgentKey {
  publicKeyHex: string;
  sign(body: string): string;
}

export function loadAgentKey(keyFile: string | null, warn: (msg: string) => void): AgentKey {
  let key: KeyObject | undefined;
  if (keyFile) {
    try {
      key = createPrivateKey(readFileSync(keyFile));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  if (!key) {
    key = generateKeyPairSync('ed25519').privateKey;
    if (keyFile) {
      try {
        mkdirSync(dirname(keyFile), { recursive: true });
        writeFileSync(keyFile, key.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
      } catch (err) {
        // Another process wrote it first: use theirs, the one the service will have registered.
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') key = createPrivateKey(readFileSync(keyFile));
        else warn(`cannot write the agent key to ${keyFile} (${(err as Error).message}); using a key for this process only`);
      }
    }
  }
  const privateKey = key;
  const publicKeyHex = createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
  return { publicKeyHex, sign: (body) => sign(null, Buffer.from(body), privateKey).toString('hex') };
}
