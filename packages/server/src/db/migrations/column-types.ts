import type { DialectName } from '../dialect/types.js';

/** Column types that differ by engine; see schema.ts for the conventions. */
export function columnTypes(dialect: DialectName) {
  return {
    uuid: dialect === 'postgres' ? ('uuid' as const) : ('text' as const),
    time: 'bigint' as const,
    json: 'text' as const,
  };
}
