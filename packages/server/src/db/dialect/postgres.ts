import type { Dialect } from './types.js';

export const postgresDialect: Dialect = { name: 'postgres', hasRowLocks: true, partitionsRawEvents: true };
