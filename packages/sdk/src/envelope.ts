import type { DsseEnvelope, PolicyBundle, PolicyKey } from '@corral/contracts';
import { createPublicKey, verify, type KeyObject } from 'node:crypto';

export const POLICY_BUNDLE_TYPE = 'application/vnd.corral.policy-bundle+json';
/** How far ahead of this machine's clock a bundle's issued_at may be. */
export const CLOCK_SKEW_MS = 60_000;

/** DSSE v1 pre-authentication encoding. */
export function pae(type: string, payload: Buffer): Buffer {
  const t = Buffer.from(type, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${t.length} `), t, Buffer.from(` ${payload.length} `), payload]);
}

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function publicKeyFromHex(hex: string): KeyObject {
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error('an Ed25519 public key is 64 hex digits');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

export type PinnedKeys = ReadonlyMap<string, KeyObject>;
export const pinKeys = (keys: readonly Pick<PolicyKey, 'keyid' | 'public_key'>[]): PinnedKeys =>
  new Map(keys.map((k) => [k.keyid, publicKeyFromHex(k.public_key)]));

export type Refusal = 'payload_type' | 'signature' | 'malformed' | 'foreign_agent' | 'replayed' | 'future';

export class EnvelopeRefused extends Error {
  constructor(readonly refusal: Refusal, message: string) {
    super(message);
    this.name = 'EnvelopeRefused';
  }
}

/**
 * Verifies a policy envelope and returns its bundle, or throws EnvelopeRefused: wrong type, no
 * signature by a pinned key, another agent's bundle, a sequence lower than the applied one (a
 * replay), or issued in the future beyond the clock-skew allowance.
 */
export function openEnvelope(envelope: DsseEnvelope, keys: PinnedKeys, expect: { agentId: string; appliedSequence: number; now: number }): PolicyBundle {
  if (envelope.payloadType !== POLICY_BUNDLE_TYPE) throw new EnvelopeRefused('payload_type', `unexpected payloadType ${envelope.payloadType}`);
  const payload = Buffer.from(envelope.payload, 'base64');
  const message = pae(envelope.payloadType, payload);
  const signed = envelope.signatures.some((s) => {
    const key = keys.get(s.keyid);
    if (!key) return false;
    try {
      return verify(null, message, key, Buffer.from(s.sig, 'base64'));
    } catch {
      return false;
    }
  });
  if (!signed) throw new EnvelopeRefused('signature', 'no valid signature by a pinned key');
  let bundle: PolicyBundle;
  try {
    bundle = JSON.parse(payload.toString('utf8')) as PolicyBundle;
  } catch {
    throw new EnvelopeRefused('malformed', 'payload is not JSON');
  }
  if (typeof bundle !== 'object' || bundle === null || typeof bundle.sequence !== 'number' || typeof bundle.policy !== 'object') {
    throw new EnvelopeRefused('malformed', 'payload is not a policy bundle');
  }
  if (bundle.agent_id !== expect.agentId) throw new EnvelopeRefused('foreign_agent', `bundle is for agent ${bundle.agent_id}`);
  if (bundle.sequence < expect.appliedSequence) throw new EnvelopeRefused('replayed', `sequence ${bundle.sequence} is lower than the applied ${expect.appliedSequence}`);
  const issued = Date.parse(bundle.issued_at);
  if (!Number.isFinite(issued) || issued > expect.now + CLOCK_SKEW_MS) throw new EnvelopeRefused('future', `issued_at ${bundle.issued_at} is in the future`);
  return bundle;
}
