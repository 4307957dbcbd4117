import type { Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { init } from './0001-init.js';

/**
 * The one migration set for both engines, in order. Names are never changed and a released
 * migration is never edited; add a new numbered one instead.
 */
export function migrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001-init': init(dialect),
  };
}
