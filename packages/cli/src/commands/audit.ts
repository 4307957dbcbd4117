import { unwrap } from '@corral/client';
import type { Command as Commander } from 'commander';
import { clientFor } from '../api.js';
import { shortTime, table } from '../format.js';
import { morePages, type PageOptions, pageQuery, paged } from '../options.js';
import { print } from '../print.js';

export function registerAudit(audit: Commander): void {
  paged(audit.command('list').description('Who did what, newest first'), 'entries')
    .option('--action <action>', 'Only this action, e.g. agent.kill_switch')
    .option('--target <id>', 'Only entries about this id')
    .action(async (o: PageOptions & { action?: string; target?: string }, command: Commander) => {
      const query = { ...pageQuery(o), ...(o.action ? { action: o.action } : {}), ...(o.target ? { target_id: o.target } : {}) };
      const page = unwrap(await clientFor(command).GET('/v1/audit-log', { params: { query } }));
      print(command, page, () =>
        table(
          ['time', 'actor', 'action', 'target', 'reason'],
          page.data.map((e) => [shortTime(e.created_at), `${e.actor_type}:${e.actor_id ?? ''}`, e.action, e.target_id ?? null, e.reason ?? null]),
        ) + morePages(page),
      );
    });
}
