import type { Dialect } from './types.js';

export const sqliteDialect: Dialect = { name: 'sqlite', hasRowLocks: false, partitionsRawEvents: false };
