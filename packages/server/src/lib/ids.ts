import { v7 } from 'uuid';

/**
 * Ids are UUIDv7: they sort by creation time, so "newest first" lists page by id alone
 * and index inserts stay in order.
 */
export const newId = (): string => v7();

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => uuidPattern.test(value);
