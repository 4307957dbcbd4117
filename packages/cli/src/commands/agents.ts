import { type Agent, unwrap } from '@corral/client';
import { type Command as Commander, Option } from 'commander';
import { clientFor } from '../api.js';
import { UsageError } from '../command.js';
import { fields, shortTime, table } from '../format.js';
import { morePages, type PageOptions, pageQuery, paged } from '../options.js';
import { print } from '../print.js';

const agentFields = (a: Agent): string =>
  fields([
    ['id', a.id],
    ['name', a.name],
    ['slug', a.slug],
    ['status', a.status],
    ['kill switch', a.kill_switch_active ? 'ENGAGED' : 'off'],
    ['policy mode', a.active_policy_mode ?? null],
    ['public key', a.public_key],
    ['created', shortTime(a.created_at)],
  ]);

const path = (id: string) => ({ params: { path: { agent_id: id } } });

export function registerAgents(agents: Commander): void {
  agents
    .command('create')
    .description('Register an agent')
    .requiredOption('--name <name>', 'Display name')
    .action(async (o: { name: string }, command: Commander) => {
      const agent = unwrap(await clientFor(command).POST('/v1/agents', { body: { name: o.name } }));
      print(command, agent, () => agentFields(agent));
    });

  paged(agents.command('list').description('List the agents'), 'agents').action(async (o: PageOptions, command: Commander) => {
    const page = unwrap(await clientFor(command).GET('/v1/agents', { params: { query: pageQuery(o) } }));
    print(command, page, () =>
      table(
        ['id', 'name', 'status', 'kill switch', 'policy', 'created'],
        page.data.map((a) => [a.id, a.name, a.status, a.kill_switch_active ? 'ENGAGED' : 'off', a.active_policy_mode ?? null, shortTime(a.created_at)]),
      ) + morePages(page),
    );
  });

  agents
    .command('get')
    .description('Show one agent')
    .argument('<agent_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const agent = unwrap(await clientFor(command).GET('/v1/agents/{agent_id}', path(id)));
      print(command, agent, () => agentFields(agent));
    });

  agents
    .command('update')
    .description('Rename an agent or change its status')
    .argument('<agent_id>')
    .option('--name <name>', 'New display name')
    .addOption(new Option('--status <status>', 'active or inactive').choices(['active', 'inactive']))
    .action(async (id: string, o: { name?: string; status?: 'active' | 'inactive' }, command: Commander) => {
      if (o.name === undefined && o.status === undefined) throw new UsageError('agents update needs --name or --status');
      const body = { ...(o.name !== undefined ? { name: o.name } : {}), ...(o.status ? { status: o.status } : {}) };
      const agent = unwrap(await clientFor(command).PUT('/v1/agents/{agent_id}', { ...path(id), body }));
      print(command, agent, () => agentFields(agent));
    });

  agents
    .command('delete')
    .description('Delete an agent (its telemetry is kept)')
    .argument('<agent_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const res = unwrap(await clientFor(command).DELETE('/v1/agents/{agent_id}', path(id)));
      print(command, res, () => `Agent ${id} deleted.`);
    });

  paged(
    agents
      .command('instances')
      .description('The SDK instances of an agent and what each has applied (policy, kill switch)')
      .argument('<agent_id>'),
    'instances',
  ).action(async (id: string, o: PageOptions, command: Commander) => {
    const page = unwrap(await clientFor(command).GET('/v1/agents/{agent_id}/instances', { params: { path: { agent_id: id }, query: pageQuery(o) } }));
    print(command, page, () => {
      const connected = page.data.filter((i) => i.connected);
      const stopped = connected.filter((i) => i.kill_switch_active).length;
      const summary = `${connected.length} of ${page.data.length} instance${page.data.length === 1 ? '' : 's'} connected` +
        (stopped > 0 ? `; ${stopped} of ${connected.length} connected stopped by the kill switch` : '');
      return table(
        ['instance', 'hostname', 'sdk', 'transport', 'connected', 'policy', 'kill switch', 'applied', 'last seen'],
        page.data.map((i) => [
          i.instance_id, i.hostname, i.sdk_version, i.transport, i.connected ? 'yes' : i.closed_at ? 'closed' : 'no',
          i.policy_version === null ? null : `v${i.policy_version} (seq ${i.policy_sequence})`,
          i.kill_switch_active ? 'ENGAGED' : 'off', shortTime(i.applied_at), shortTime(i.last_seen_at),
        ]),
      ) + `\n${summary}` + morePages(page);
    });
  });

  const killSwitch = (active: boolean) => async (id: string, o: { reason?: string }, command: Commander) => {
    const body = { active, ...(o.reason ? { reason: o.reason } : {}) };
    const agent = unwrap(await clientFor(command).POST('/v1/agents/{agent_id}/kill-switch', { ...path(id), body }));
    print(command, agent, () => `Kill switch of ${agent.name} (${agent.id}) ${agent.kill_switch_active ? 'ENGAGED: every outbound call is blocked' : 'released'}.`);
  };
  agents
    .command('kill')
    .description('Engage the kill switch: the agent\'s SDK blocks every outbound call')
    .argument('<agent_id>')
    .requiredOption('--reason <text>', 'Why (recorded in the audit log)')
    .action(killSwitch(true));
  agents
    .command('resume')
    .description('Release the kill switch')
    .argument('<agent_id>')
    .option('--reason <text>', 'Why (recorded in the audit log)')
    .action(killSwitch(false));
}
