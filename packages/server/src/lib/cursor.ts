import { ValidationError } from '../errors.js';
import { isUuid } from './ids.js';

/**
 * Cursors for lists ordered by UUIDv7 id, newest first: the cursor is the last id returned,
 * as the interface shows for agents. Anything else is a 400, never a query.
 */
export function parseIdCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  if (!isUuid(cursor)) throw new ValidationError('cursor is not valid', [{ field: 'cursor', message: 'must be a cursor from next_cursor' }]);
  return cursor.toLowerCase();
}

/** Builds the list envelope from limit+1 rows fetched newest first. */
export function toPage<Row extends { id: string }, Item>(rows: Row[], limit: number, map: (row: Row) => Item) {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  return {
    data: pageRows.map(map),
    has_more: hasMore,
    next_cursor: hasMore ? (pageRows[pageRows.length - 1]?.id ?? null) : null,
  };
}
