import { type Schemas, unwrap } from '@corral/client';
import { type Command as Commander, InvalidArgumentError, Option } from 'commander';
import { clientFor } from '../api.js';
import { UsageError } from '../command.js';
import { shortTime, table } from '../format.js';
import { morePages, type PageOptions, pageQuery, paged } from '../options.js';
import { print } from '../print.js';

type Scope = Schemas['ApiKeyScope'];
type Access = 'read' | 'write';

/** `agents=read` → ['agents', 'read']; repeated, they build a restricted key's resource map. */
function resource(value: string, previous: Record<string, Access> = {}): Record<string, Access> {
  const match = /^([a-z_]+)=(read|write)$/.exec(value);
  if (!match?.[1] || !match[2]) throw new InvalidArgumentError('expected <resource>=read|write, e.g. agents=read.');
  return { ...previous, [match[1]]: match[2] as Access };
}

function scopeOf(kind: string, resources: Record<string, Access> | undefined): Scope {
  if (kind === 'restricted') {
    if (!resources) throw new UsageError('--scope restricted needs at least one --resource <name>=read|write');
    return { kind: 'restricted', resources };
  }
  if (resources) throw new UsageError('--resource is only for --scope restricted');
  return { kind: kind === 'full' ? 'all' : 'read_only' };
}

const scopeText = (scope: Scope): string =>
  scope.kind === 'restricted' ? Object.entries((scope as { resources: Record<string, string> }).resources).map(([r, a]) => `${r}=${a}`).join(',') : scope.kind;

export function registerKeys(keys: Commander): void {
  keys
    .command('create')
    .description('Create an API key; the key itself is printed this once')
    .requiredOption('--name <name>', 'Display name')
    .addOption(new Option('--scope <scope>', 'What it may do').choices(['full', 'read-only', 'restricted']).default('full'))
    .option('--resource <name=access>', 'For --scope restricted, repeatable: agents|policies|events|alerts = read|write', resource)
    .addOption(new Option('--environment <env>', 'Key prefix crl_live_ or crl_test_').choices(['live', 'test']))
    .option('--expires-at <time>', 'RFC 3339 expiry (default: never)')
    .action(async (o: { name: string; scope: string; resource?: Record<string, Access>; environment?: 'live' | 'test'; expiresAt?: string }, command: Commander) => {
      const body = {
        name: o.name,
        scope: scopeOf(o.scope, o.resource),
        ...(o.environment ? { environment: o.environment } : {}),
        ...(o.expiresAt ? { expires_at: o.expiresAt } : {}),
      };
      const created = unwrap(await clientFor(command).POST('/v1/keys', { body }));
      print(command, created, () =>
        [`Created key "${created.name}" (${created.id}), scope ${scopeText(created.scope)}:`, '', `  ${created.key}`, '', 'Store it now: it is not shown again.'].join('\n'),
      );
    });

  paged(keys.command('list').description('List the API keys (never the keys themselves)'), 'keys').action(async (o: PageOptions, command: Commander) => {
    const page = unwrap(await clientFor(command).GET('/v1/keys', { params: { query: pageQuery(o) } }));
    print(command, page, () =>
      table(
        ['id', 'name', 'prefix', 'scope', 'last used', 'expires', 'revoked'],
        page.data.map((k) => [k.id, k.name, k.key_prefix, scopeText(k.scope), shortTime(k.last_used_at), shortTime(k.expires_at), shortTime(k.revoked_at)]),
      ) + morePages(page),
    );
  });

  keys
    .command('revoke')
    .description('Revoke a key: requests with it get 401 from now on')
    .argument('<key_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const res = unwrap(await clientFor(command).POST('/v1/keys/{key_id}/revoke', { params: { path: { key_id: id } } }));
      print(command, res, () => `Key ${id} revoked.`);
    });

  keys
    .command('delete')
    .description('Delete a revoked key for good')
    .argument('<key_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const res = unwrap(await clientFor(command).DELETE('/v1/keys/{key_id}', { params: { path: { key_id: id } } }));
      print(command, res, () => `Key ${id} deleted.`);
    });
}
