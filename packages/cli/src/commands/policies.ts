import { diffLines, type PolicyVersion, policyText, type Schemas, unwrap } from '@corral/client';
import type { Command as Commander } from 'commander';
import { readFileSync } from 'node:fs';
import { clientFor } from '../api.js';
import { UsageError } from '../command.js';
import { fields, shortTime, table } from '../format.js';
import { integer, morePages, type PageOptions, pageQuery, paged } from '../options.js';
import { print } from '../print.js';

const versionFields = (p: PolicyVersion): string =>
  [
    fields([
      ['version', p.version],
      ['active', p.is_active],
      ['mode', p.mode],
      ['hash', p.hash],
      ['created', shortTime(p.created_at)],
      ['activated', shortTime(p.activated_at)],
    ]),
    '',
    policyText(p.policy),
  ].join('\n');

/** A .json file is sent as the document; anything else as YAML text, which the server parses and checks. */
function bodyOf(file: string): { policy: Schemas['PolicyDocumentInput'] } | { yaml_content: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!file.endsWith('.json')) return { yaml_content: text };
  try {
    return { policy: JSON.parse(text) as Schemas['PolicyDocumentInput'] };
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
  }
}

export function registerPolicies(policies: Commander): void {
  const client = (command: Commander) => clientFor(command);
  const one = async (command: Commander, agentId: string, version: string): Promise<PolicyVersion> => {
    if (version === 'active') return unwrap(await client(command).GET('/v1/agents/{agent_id}/policies/active', { params: { path: { agent_id: agentId } } }));
    return unwrap(await client(command).GET('/v1/agents/{agent_id}/policies/{version}', { params: { path: { agent_id: agentId, version: integer(version) } } }));
  };

  policies
    .command('create')
    .description('Add the next policy version from a YAML or JSON file')
    .argument('<agent_id>')
    .requiredOption('--file <path>', 'policy.yaml or policy.json')
    .option('--activate', 'Make it the active version (pushed to the agent at once)')
    .action(async (agentId: string, o: { file: string; activate?: boolean }, command: Commander) => {
      const body = { ...bodyOf(o.file), activate: o.activate === true };
      const created = unwrap(await client(command).POST('/v1/agents/{agent_id}/policies', { params: { path: { agent_id: agentId } }, body }));
      print(command, created, () => `Created version ${created.version} (${created.hash})${created.is_active ? ', now active' : ''}.`);
    });

  paged(policies.command('list').description("An agent's policy versions, newest first").argument('<agent_id>'), 'versions').action(
    async (agentId: string, o: PageOptions, command: Commander) => {
      const page = unwrap(await client(command).GET('/v1/agents/{agent_id}/policies', { params: { path: { agent_id: agentId }, query: pageQuery(o) } }));
      print(command, page, () =>
        table(
          ['version', 'active', 'mode', 'rules', 'hash', 'created'],
          page.data.map((p) => [p.version, p.is_active ? 'active' : '', p.mode, p.policy.rules.length, p.hash.slice(0, 19), shortTime(p.created_at)]),
        ) + morePages(page),
    );
    },
  );

  policies
    .command('get')
    .description('One version with its document ("active" for the active one)')
    .argument('<agent_id>')
    .argument('<version>', 'a version number or "active"')
    .action(async (agentId: string, version: string, _o: unknown, command: Commander) => {
      const p = await one(command, agentId, version);
      print(command, p, () => versionFields(p));
    });

  policies
    .command('activate')
    .description('Make a version active; an older one is a rollback')
    .argument('<agent_id>')
    .argument('<version>', 'the version number', integer)
    .action(async (agentId: string, version: number, _o: unknown, command: Commander) => {
      const p = unwrap(await client(command).POST('/v1/agents/{agent_id}/policies/{version}/activate', { params: { path: { agent_id: agentId, version } } }));
      print(command, p, () => `Version ${p.version} of agent ${agentId} is active (${p.hash}).`);
    });

  policies
    .command('diff')
    .description('What changed between two versions ("active" names the active one)')
    .argument('<agent_id>')
    .argument('<from>')
    .argument('<to>')
    .action(async (agentId: string, from: string, to: string, _o: unknown, command: Commander) => {
      const [a, b] = await Promise.all([one(command, agentId, from), one(command, agentId, to)]);
      const lines = diffLines(policyText(a.policy), policyText(b.policy));
      const changed = lines.filter((l) => l.op !== ' ').length;
      print(command, { from: a.version, to: b.version, changed, lines }, () =>
        [`--- version ${a.version}`, `+++ version ${b.version}`, ...lines.map((l) => `${l.op}${l.text}`)].join('\n'),
      );
    });
}
