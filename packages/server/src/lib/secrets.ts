import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Reads a secret kept in DATA_DIR, creating it on first start. The file is created exclusively
 * (`wx`) so two processes starting together agree on one value, and is readable by its owner only.
 */
export function loadOrCreateSecret(dataDir: string, fileName: string, create: () => string = () => randomBytes(48).toString('base64url')): string {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, fileName);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    writeFileSync(file, `${create()}\n`, { flag: 'wx', mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readFileSync(file, 'utf8').trim();
}
