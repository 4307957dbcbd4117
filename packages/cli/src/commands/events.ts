import { ApiError, apiErrorOf, type CorralClient, type DashboardEvent, readSse, unwrap } from '@corral/client';
import { type Command as Commander, Option } from 'commander';
import { clientFor, globalsOf, resolveConnection } from '../api.js';
import { shortTime, table } from '../format.js';
import { integer, morePages, type PageOptions, pageQuery, paged } from '../options.js';
import { print } from '../print.js';

interface FilterOptions {
  agent?: string;
  method?: string;
  host?: string;
  status?: number;
  result?: 'allowed' | 'denied' | 'error';
  from?: string;
  to?: string;
  trace?: string;
}

/** The dashboard's event filters, the same names as its query (agent_id, url_host, ...). */
function filters(command: Commander): Commander {
  return command
    .option('--agent <agent_id>', 'One agent')
    .option('--method <method>', 'HTTP method, e.g. POST')
    .option('--host <host>', 'Target host (url_host)')
    .option('--status <code>', 'HTTP status code', integer)
    .addOption(new Option('--result <result>', 'Policy result').choices(['allowed', 'denied', 'error']))
    .option('--from <time>', 'RFC 3339 start (default 24 hours before --to)')
    .option('--to <time>', 'RFC 3339 end (default now)')
    .option('--trace <trace_id>', 'W3C trace id (32 hex)');
}

const filterQuery = (o: FilterOptions) => ({
  ...(o.agent ? { agent_id: o.agent } : {}),
  ...(o.method ? { method: o.method } : {}),
  ...(o.host ? { url_host: o.host } : {}),
  ...(o.status !== undefined ? { status_code: o.status } : {}),
  ...(o.result ? { policy_result: o.result } : {}),
  ...(o.from ? { from: o.from } : {}),
  ...(o.to ? { to: o.to } : {}),
  ...(o.trace ? { trace_id: o.trace } : {}),
});

const headers = ['time', 'agent', 'method', 'host', 'path', 'status', 'ms', 'result', 'rule'];
const row = (e: DashboardEvent) => [
  shortTime(e.timestamp),
  e.agent_id.slice(0, 8),
  e.method,
  e.url_host,
  e.url_path,
  e.status_code,
  e.latency_ms,
  e.policy_result,
  e.deny_reason ?? null,
];

const controlLine = (event: string, data: Record<string, unknown>): string =>
  `${shortTime(new Date().toISOString())}  ${event === 'kill_switch' ? `kill switch ${data.active ? 'ENGAGED' : 'released'}` : `policy version ${String(data.version)} active`}`;

/**
 * With --agent, the agent's dashboard stream drives the tail: each `telemetry` hint reads the
 * new events (one read at a time; hints during a read cause one more), control events are
 * printed as they come, and a dropped stream is opened again. Without --agent there is no
 * stream for the whole organization, so the tail reads every --interval.
 */
async function tail(client: CorralClient, o: FilterOptions & { interval: number }, command: Commander): Promise<void> {
  const json = globalsOf(command).json === true;
  const seen = new Set<string>();
  let since = o.from ?? new Date(Date.now() - 60_000).toISOString();
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const write = (line: string) => process.stdout.write(`${line}\n`);

  async function readNew(): Promise<void> {
    const page = unwrap(await client.GET('/v1/dashboard/events', { params: { query: { ...filterQuery(o), from: since, limit: 100 } } }));
    for (const e of page.data.filter((e) => !seen.has(e.request_id)).reverse()) {
      seen.add(e.request_id);
      write(json ? JSON.stringify(e) : row(e).map((c) => (c === null || c === undefined ? '-' : String(c))).join('  '));
      if (e.timestamp > since) since = e.timestamp;
    }
  }
  let reading: Promise<void> | undefined;
  let isDirty = false;
  function readSoon(): void {
    if (reading) {
      isDirty = true;
      return;
    }
    reading = (async () => {
      do {
        isDirty = false;
        await readNew();
      } while (isDirty && !stop.signal.aborted);
    })().finally(() => (reading = undefined));
  }
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });

  if (!json) write(headers.join('  ').toUpperCase());
  await readNew();
  if (!o.agent) {
    while (!stop.signal.aborted) {
      await pause(o.interval);
      if (!stop.signal.aborted) await readNew();
    }
    return;
  }
  const { url, token } = resolveConnection(globalsOf(command));
  const streamUrl = `${url.replace(/\/+$/, '')}/v1/agents/${encodeURIComponent(o.agent)}/control/dashboard-stream`;
  while (!stop.signal.aborted) {
    try {
      const res = await fetch(streamUrl, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: stop.signal });
      if (!res.ok || !res.body) throw apiErrorOf(res, await res.json().catch(() => undefined));
      for await (const message of readSse(res.body)) {
        if (message.event === 'telemetry' || message.event === 'init') readSoon();
        else if (message.event === 'kill_switch' || message.event === 'policy_updated') {
          const data = JSON.parse(message.data) as Record<string, unknown>;
          write(json ? JSON.stringify({ control: message.event, agent_id: o.agent, ...data }) : controlLine(message.event, data));
        }
      }
    } catch (err) {
      if (stop.signal.aborted) break;
      if (err instanceof ApiError && err.status < 500) throw err;
    }
    await pause(1000);
  }
}

export function registerEvents(events: Commander): void {
  paged(filters(events.command('list').description('Telemetry events, newest first, with every dashboard filter')), 'events').action(
    async (o: FilterOptions & PageOptions, command: Commander) => {
      const page = unwrap(await clientFor(command).GET('/v1/dashboard/events', { params: { query: { ...filterQuery(o), ...pageQuery(o) } } }));
      print(command, page, () => table(headers, page.data.map(row)) + morePages(page));
    },
  );

  events
    .command('get')
    .description('One event by its request id')
    .argument('<request_id>')
    .action(async (id: string, _o: unknown, command: Commander) => {
      const e = unwrap(await clientFor(command).GET('/v1/dashboard/events/{request_id}', { params: { path: { request_id: id } } }));
      print(command, e, () => table(headers, [row(e)]));
    });

  filters(events.command('tail').description("Print events as they arrive (Ctrl-C stops); with --agent live from the agent's dashboard stream, with its kill switch and policy changes"))
    .option('--interval <ms>', 'Without --agent: how often to look for new events', integer, 1000)
    .action((o: FilterOptions & { interval: number }, command: Commander) => tail(clientFor(command), o, command));
}
