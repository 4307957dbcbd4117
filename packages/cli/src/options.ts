import { type Command as Commander, InvalidArgumentError } from 'commander';

/** Integer option values are checked here, so "--limit ten" is a usage error (2) before any request. */
export function integer(value: string): number {
  if (!/^-?\d{1,15}$/.test(value)) throw new InvalidArgumentError('not an integer.');
  return Number(value);
}

export function decimal(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('not a number.');
  return n;
}

/** `--limit` and `--cursor`, the two options of every paged list. */
export function paged(command: Commander, what = 'items'): Commander {
  return command.option('--limit <n>', `How many ${what} per page`, integer).option('--cursor <cursor>', 'Continue from the next_cursor of a previous page');
}

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

export const pageQuery = (o: PageOptions) => ({ ...(o.limit !== undefined ? { limit: o.limit } : {}), ...(o.cursor ? { cursor: o.cursor } : {}) });

/** The hint under a table when there is more. */
export const morePages = (page: { has_more: boolean; next_cursor: string | null }): string =>
  page.has_more && page.next_cursor ? `\n(more: --cursor ${page.next_cursor})` : '';
