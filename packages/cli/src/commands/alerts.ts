import { type Alert, unwrap } from '@corral/client';
import { Argument, type Command as Commander, InvalidArgumentError, Option } from 'commander';
import { clientFor } from '../api.js';
import { UsageError } from '../command.js';
import { fields, number, shortTime, table } from '../format.js';
import { decimal, integer, morePages, type PageOptions, pageQuery, paged } from '../options.js';
import { print } from '../print.js';
import { parseTtl } from './token.js';

const conditions = ['error_rate', 'latency_p99', 'denied_rate', 'volume_drop'] as const;
const channels = ['email', 'webhook'] as const;

const alertFields = (a: Alert): string =>
  fields([
    ['id', a.id],
    ['agent', `${a.agent_name ?? ''} (${a.agent_id})`],
    ['condition', `${a.condition_type} > ${a.threshold} over ${a.window_minutes}m`],
    ['channel', `${a.channel} ${a.channel_target}`],
    ['cooldown', `${a.cooldown_minutes}m`],
    ['enabled', a.is_enabled],
    ['state', a.state ?? null],
    ['notifications', a.notification_count],
    ['last triggered', shortTime(a.last_triggered_at)],
    ['muted until', shortTime(a.muted_until)],
  ]);

interface RuleOptions {
  agent?: string;
  condition?: (typeof conditions)[number];
  threshold?: number;
  window?: number;
  channel?: (typeof channels)[number];
  target?: string;
  cooldown?: number;
}

/** The rule's fields as options: required on create, any subset on update. */
function ruleOptions(command: Commander, required: boolean): Commander {
  const add = (flags: string, description: string, parse?: (value: string) => unknown, choices?: readonly string[]) => {
    const option = new Option(flags, description);
    if (parse) option.argParser(parse);
    if (choices) option.choices(choices);
    if (required && !flags.startsWith('--window') && !flags.startsWith('--cooldown')) option.makeOptionMandatory();
    command.addOption(option);
  };
  add('--agent <agent_id>', 'The agent to watch');
  add('--condition <type>', 'What to watch', undefined, conditions);
  add('--threshold <n>', 'Fires above it: percent for the rates, ms for latency_p99', decimal);
  add('--window <minutes>', 'Evaluation window (default 15)', integer);
  add('--channel <channel>', 'How to notify', undefined, channels);
  add('--target <address>', 'Email address or webhook URL');
  add('--cooldown <minutes>', 'Least time between notifications (default 60)', integer);
  return command;
}

const ruleBody = (o: RuleOptions) => ({
  ...(o.agent !== undefined ? { agent_id: o.agent } : {}),
  ...(o.condition !== undefined ? { condition_type: o.condition } : {}),
  ...(o.threshold !== undefined ? { threshold: o.threshold } : {}),
  ...(o.window !== undefined ? { window_minutes: o.window } : {}),
  ...(o.channel !== undefined ? { channel: o.channel } : {}),
  ...(o.target !== undefined ? { channel_target: o.target } : {}),
  ...(o.cooldown !== undefined ? { cooldown_minutes: o.cooldown } : {}),
});

const path = (id: string) => ({ params: { path: { alert_id: id } } });

function duration(value: string): number {
  const seconds = parseTtl(value);
  if (seconds === undefined) throw new InvalidArgumentError('expected a duration such as 30m, 2h or 7d.');
  return seconds;
}

export function registerAlerts(alerts: Commander): void {
  ruleOptions(alerts.command('create').description('Create an alert rule'), true).action(async (o: RuleOptions, command: Commander) => {
    // Mandatory options: commander has refused the command already if one is missing.
    const body = { ...ruleBody(o), agent_id: o.agent!, condition_type: o.condition!, threshold: o.threshold!, channel: o.channel!, channel_target: o.target! };
    const alert = unwrap(await clientFor(command).POST('/v1/alerts', { body }));
    print(command, alert, () => alertFields(alert));
  });

  paged(alerts.command('list').description('List the alert rules'), 'rules').action(async (o: PageOptions, command: Commander) => {
    const page = unwrap(await clientFor(command).GET('/v1/alerts', { params: { query: pageQuery(o) } }));
    print(command, page, () =>
      table(
        ['id', 'agent', 'condition', 'channel', 'enabled', 'state', 'muted until'],
        page.data.map((a) => [a.id, a.agent_name ?? a.agent_id, `${a.condition_type} > ${a.threshold}`, a.channel, a.is_enabled, a.state ?? null, shortTime(a.muted_until)]),
      ) + morePages(page),
    );
  });

  alerts
    .command('get')
    .description('Show one alert rule')
    .argument('<alert_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const alert = unwrap(await clientFor(command).GET('/v1/alerts/{alert_id}', path(id)));
      print(command, alert, () => alertFields(alert));
    });

  ruleOptions(alerts.command('update').description('Change some fields of a rule; the rest keep their values').argument('<alert_id>'), false).action(
    async (id: string, o: RuleOptions, command: Commander) => {
      const body = ruleBody(o);
      if (Object.keys(body).length === 0) throw new UsageError('alerts update needs at least one field to change');
      const alert = unwrap(await clientFor(command).PUT('/v1/alerts/{alert_id}', { ...path(id), body }));
      print(command, alert, () => alertFields(alert));
    },
  );

  alerts
    .command('delete')
    .description('Delete a rule')
    .argument('<alert_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const res = unwrap(await clientFor(command).DELETE('/v1/alerts/{alert_id}', path(id)));
      print(command, res, () => `Alert ${id} deleted.`);
    });

  alerts
    .command('toggle')
    .description('Enable or disable a rule')
    .argument('<alert_id>')
    .addArgument(new Argument('<state>', 'on or off').choices(['on', 'off']))
    .action(async (id: string, state: 'on' | 'off', _o: unknown, command: Commander) => {
      const alert = unwrap(await clientFor(command).POST('/v1/alerts/{alert_id}/toggle', { ...path(id), body: { is_enabled: state === 'on' } }));
      print(command, alert, () => `Alert ${alert.id} is ${alert.is_enabled ? 'enabled' : 'disabled'}.`);
    });

  alerts
    .command('mute')
    .description('Keep evaluating but send nothing for a while')
    .argument('<alert_id>')
    .option('--for <duration>', 'How long, e.g. 30m, 2h, 7d', duration)
    .option('--until <time>', 'Or until an RFC 3339 time')
    .option('--reason <text>', 'Recorded in the audit log')
    .action(async (id: string, o: { for?: number; until?: string; reason?: string }, command: Commander) => {
      if ((o.for === undefined) === (o.until === undefined)) throw new UsageError('alerts mute needs one of --for <duration> or --until <time>');
      const until = o.until ?? new Date(Date.now() + (o.for ?? 0) * 1000).toISOString();
      const alert = unwrap(await clientFor(command).POST('/v1/alerts/{alert_id}/mute', { ...path(id), body: { until, ...(o.reason ? { reason: o.reason } : {}) } }));
      print(command, alert, () => `Alert ${alert.id} muted until ${shortTime(alert.muted_until)} UTC.`);
    });

  alerts
    .command('unmute')
    .description('Notify again from the next state change')
    .argument('<alert_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const alert = unwrap(await clientFor(command).POST('/v1/alerts/{alert_id}/unmute', path(id)));
      print(command, alert, () => `Alert ${alert.id} unmuted.`);
    });

  paged(alerts.command('history').description('Firing and resolved transitions, newest first').argument('<alert_id>'), 'records').action(
    async (id: string, o: PageOptions, command: Commander) => {
      const page = unwrap(await clientFor(command).GET('/v1/alerts/{alert_id}/history', { params: { path: { alert_id: id }, query: pageQuery(o) } }));
      print(command, page, () =>
        table(['time', 'state', 'value', 'threshold'], page.data.map((h) => [shortTime(h.created_at), h.state, number(h.value), h.threshold])) + morePages(page),
      );
    },
  );

  paged(alerts.command('notifications').description('The notification ledger: every delivery and its status').argument('<alert_id>'), 'records').action(
    async (id: string, o: PageOptions, command: Commander) => {
      const page = unwrap(await clientFor(command).GET('/v1/alerts/{alert_id}/notifications', { params: { path: { alert_id: id }, query: pageQuery(o) } }));
      print(command, page, () =>
        table(
          ['time', 'kind', 'channel', 'recipient', 'status', 'attempts', 'error'],
          page.data.map((n) => [shortTime(n.created_at), n.kind, n.channel, n.recipient, n.status, n.attempts, n.error ?? null]),
        ) + morePages(page),
      );
    },
  );

  alerts
    .command('test')
    .description('Send a test notification through the rule\'s channel now')
    .argument('<alert_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const n = unwrap(await clientFor(command).POST('/v1/alerts/{alert_id}/test', path(id)));
      print(command, n, () => `Test notification to ${n.recipient}: ${n.status}${n.error ? ` (${n.error})` : ''}.`);
    });
}
