import type { AlertWithSecret, TelemetryEvent } from '@corral/contracts';
import type { TestContext } from './build-test-app.js';
import { event, postEvents } from './telemetry-fixtures.js';

export const MINUTE = 60_000;
/** The evaluator looks at whole minutes up to the boundary that ended this long ago. */
export const SETTLE = 10_000;

/** Creates a rule through the API; any field can be overridden. */
export async function createAlert(
  ctx: TestContext, token: string, agentId: string, body: Record<string, unknown> = {},
): Promise<AlertWithSecret> {
  const res = await ctx.request({
    method: 'POST', url: '/v1/alerts', token,
    payload: { agent_id: agentId, condition_type: 'error_rate', threshold: 50, window_minutes: 5, channel: 'email', channel_target: 'ops@example.com', ...body },
  });
  if (res.statusCode !== 200) throw new Error(`alert create failed: ${res.statusCode} ${res.body}`);
  return res.json<AlertWithSecret>();
}

/** Moves the test clock to just after the next minute boundary's settle time; answers that boundary. */
export function toNextSlot(ctx: TestContext): number {
  const boundary = Math.ceil((ctx.clock.now() + 1) / MINUTE) * MINUTE;
  ctx.clock.set(boundary + SETTLE);
  return boundary;
}

/** `count` calls of an agent at `at`, all with the same outcome. */
export function calls(agentId: string, at: number, count: number, overrides: Partial<TelemetryEvent> = {}): TelemetryEvent[] {
  return Array.from({ length: count }, (_, i) => event(agentId, { at: at + i, ...overrides }));
}

export async function send(ctx: TestContext, apiKey: string, events: TelemetryEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    const res = await postEvents(ctx, apiKey, events.slice(i, i + 1000));
    if (res.statusCode !== 200) throw new Error(`telemetry failed: ${res.statusCode} ${res.body}`);
  }
}

export async function getJson<T>(ctx: TestContext, token: string, url: string): Promise<T> {
  const res = await ctx.request({ method: 'GET', url, token });
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
  return res.json<T>();
}
