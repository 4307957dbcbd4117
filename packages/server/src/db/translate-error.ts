import { ConflictError } from '../errors.js';
import type { DialectName } from './dialect/types.js';

/**
 * Driver errors become the service's errors here and nowhere else. Unique violations are
 * conflicts; anything else is rethrown as is (and becomes a 500 with the message hidden).
 */
export function isUniqueViolation(dialect: DialectName, err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (dialect === 'postgres') return code === '23505';
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export function translateError(dialect: DialectName, err: unknown, conflictMessage = 'Conflicting change'): never {
  if (isUniqueViolation(dialect, err)) throw new ConflictError(conflictMessage);
  throw err;
}
