import type { DsseEnvelope } from '@corral/contracts';
import { sign } from 'node:crypto';
import type { SigningKey } from './signing-key.js';

/**
 * DSSE v1 pre-authentication encoding: `DSSEv1 <len(type)> <type> <len(body)> <body>`, lengths in
 * bytes as ASCII decimals. Signing this, not the bare payload, binds the type to the signature.
 */
export function preAuthEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `, 'ascii'), type, Buffer.from(` ${payload.length} `, 'ascii'), payload]);
}

export function signEnvelope(key: SigningKey, payloadType: string, payload: Buffer): DsseEnvelope {
  const sig = sign(null, preAuthEncoding(payloadType, payload), key.privateKey);
  return {
    payloadType,
    payload: payload.toString('base64'),
    signatures: [{ keyid: key.keyid, sig: sig.toString('base64') }],
  };
}
