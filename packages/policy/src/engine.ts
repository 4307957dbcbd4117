import type { BodyMatch, HeaderMatch, MAX_POLICY_RULES, Matcher, PolicyDocument, PolicyRule } from '@corral/contracts';
import { rulesProblems } from './document-checks.js';
import { compileGlob, globTarget } from './glob.js';
import { parseJsonPath, someAt } from './jsonpath.js';

/** One outbound call as the engine sees it. */
export interface PolicyRequest {
  /** Upper-case HTTP method. */
  method: string;
  /** Lower-cased hostname, plus `:port` when not the scheme's default (the reported `url_host`). */
  host: string;
  /** The path, without the query string. */
  path: string;
  /** A header's value by lower-case name, or null when absent. */
  header(name: string): string | null;
  /** The body as parsed JSON, or undefined when there is none or it is not JSON; read only if a rule needs it. */
  body(): unknown;
  /** The key `per: endpoint` limits count by; `METHOD host/path` when not given (the SDK passes the path template). */
  endpoint?: string;
}

export type BlockReason = 'kill_switch' | 'rule' | 'rate_limit' | 'default' | 'no_policy';

/** What happens to a call. Decisions are shared constants: treat them as read-only. */
export interface Decision {
  /** Whether the call may go out. */
  readonly allowed: boolean;
  /** Why it is blocked (or, in dry_run, would have been); null when nothing objects. */
  readonly reason: BlockReason | null;
  /** The rule that decided, or null (default, kill switch, no rule matched). */
  readonly rule: string | null;
  /** What the telemetry event reports as `deny_reason`: the rule's name, `kill_switch`, `default`, or null. */
  readonly denyReason: string | null;
  /** True when the policy is in dry_run and the call would have been blocked. */
  readonly dryRun: boolean;
}

const freeze = (d: Decision): Decision => Object.freeze(d);
// Type-only link to the contracts' limit: the engine stays free of runtime dependencies, and this
// line stops compiling if the schema's limit changes without it.
const MAX_RULES: typeof MAX_POLICY_RULES = 200;

export const KILL_SWITCH_DECISION = freeze({ allowed: false, reason: 'kill_switch', rule: null, denyReason: 'kill_switch', dryRun: false });
export const NO_POLICY_DECISION = freeze({ allowed: false, reason: 'no_policy', rule: null, denyReason: 'no_policy', dryRun: false });
export const ALLOW_DECISION = freeze({ allowed: true, reason: null, rule: null, denyReason: null, dryRun: false });

type Test = (req: PolicyRequest, target: string) => boolean;

function headerTest(h: HeaderMatch): Test {
  const name = h.name.toLowerCase();
  if (h.present !== undefined) {
    const want = h.present;
    return (req) => (req.header(name) !== null) === want;
  }
  const { exact, prefix, contains } = h;
  return (req) => {
    const value = req.header(name);
    if (value === null) return false;
    if (exact !== undefined) return value === exact;
    if (prefix !== undefined) return value.startsWith(prefix);
    return contains !== undefined && value.includes(contains);
  };
}

type Scalar = string | number | boolean | null;

function valueTest(b: BodyMatch): (v: unknown) => boolean {
  const { exact, prefix, contains, min, max } = b;
  if (exact !== undefined) return (v) => v === exact;
  if (b.in !== undefined) {
    const set = new Set<Scalar>(b.in);
    return (v) => (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') && set.has(v);
  }
  if (prefix !== undefined) return (v) => typeof v === 'string' && v.startsWith(prefix);
  if (contains !== undefined) return (v) => typeof v === 'string' && v.includes(contains);
  return (v) => typeof v === 'number' && (min === undefined || v >= min) && (max === undefined || v <= max);
}

function bodyTest(b: BodyMatch): Test {
  const steps = parseJsonPath(b.jsonpath);
  const test = valueTest(b);
  return (req) => {
    const body = req.body();
    return body !== undefined && someAt(body, steps, test);
  };
}

/** A matcher compiled to one test: cheapest parts first (method, url, headers, body). */
function compileMatcher(m: Matcher): Test {
  const tests: Test[] = [];
  if (m.method) {
    const methods = new Set<string>(m.method);
    tests.push((req) => methods.has(req.method));
  }
  if (m.url !== undefined) {
    const glob = compileGlob(m.url);
    tests.push((_req, target) => glob.matches(target));
  }
  for (const h of m.headers ?? []) tests.push(headerTest(h));
  for (const b of m.body ?? []) tests.push(bodyTest(b));
  return (req, target) => {
    for (const test of tests) if (!test(req, target)) return false;
    return true;
  };
}

/** Token buckets keyed by endpoint: `calls_per_minute` tokens, refilled continuously. */
class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;
  constructor(private readonly capacity: number, private readonly maxKeys = 10_000) {
    this.perMs = capacity / 60_000;
  }

  take(key: string, now: number): boolean {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      // Bounded: an unbounded set of endpoints cannot grow memory without end; the oldest goes.
      if (this.buckets.size >= this.maxKeys) {
        const oldest = this.buckets.keys().next();
        if (!oldest.done) this.buckets.delete(oldest.value);
      }
      bucket = { tokens: this.capacity, at: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

interface CompiledRule {
  readonly name: string;
  /** The one host the rule can match (lower-cased, `:port` included), or null when it may match any. */
  readonly host: string | null;
  readonly test: Test | null;
  readonly blocked: Decision;
  readonly limiter?: RateLimiter;
  readonly perEndpoint?: boolean;
}

export interface EvaluateOptions {
  /** The kill switch is active: every call is blocked, whatever the policy says or its mode. */
  killSwitch?: boolean;
  /** Milliseconds since the epoch, for rate limits; Date.now() when not given. */
  now?: number;
}

export interface CompiledPolicy {
  readonly mode: PolicyDocument['mode'];
  readonly ruleCount: number;
  /** Whether some rule reads the request body (a caller may skip preparing it otherwise). */
  readonly usesBody: boolean;
  /** Kill switch, rate limits, deny rules, allow rules, default (contract section 6). */
  evaluate(req: PolicyRequest, options?: EvaluateOptions): Decision;
}

export class PolicyCompileError extends Error {
  constructor(readonly problems: ReadonlyArray<{ field: string; message: string }>) {
    super(`Invalid policy: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
    this.name = 'PolicyCompileError';
  }
}

/** The host a matcher's URL glob names literally, or null when its host part has a wildcard or it has no URL. */
function literalHost(m: Matcher | undefined): string | null {
  const first = m?.url?.split('/', 1)[0];
  return first === undefined || first.includes('*') ? null : first.toLowerCase();
}

/**
 * Rules grouped by the host they can match, each group in document order: a call walks only the
 * rules that name its host and those that may match any host. A policy of 200 rules over 50
 * hosts costs a call the few rules of its own host, not 200 glob tests.
 */
class HostIndex {
  private readonly byHost = new Map<string, readonly CompiledRule[]>();
  private readonly anyHost: readonly CompiledRule[];

  constructor(rules: readonly CompiledRule[]) {
    this.anyHost = rules.filter((r) => r.host === null);
    for (const r of rules) {
      if (r.host !== null && !this.byHost.has(r.host)) this.byHost.set(r.host, rules.filter((o) => o.host === null || o.host === r.host));
    }
  }

  /** `host` is lower-cased. */
  rulesFor(host: string): readonly CompiledRule[] {
    return this.byHost.get(host) ?? this.anyHost;
  }
}

function blockedDecision(reason: BlockReason, rule: string | null, denyReason: string, dryRun: boolean): Decision {
  return freeze(dryRun ? { allowed: true, reason, rule, denyReason, dryRun: true } : { allowed: false, reason, rule, denyReason, dryRun: false });
}

/**
 * Compiles a document once into matchers. The document must have the stored shape (the server
 * checked it against the contracts schema; a signed bundle carries it); the checks a schema
 * cannot say are run here again, so a document the server refuses is refused here too.
 */
export function compile(document: PolicyDocument): CompiledPolicy {
  if (document.rules.length > MAX_RULES) throw new PolicyCompileError([{ field: 'rules', message: `has more than ${MAX_RULES} rules` }]);
  const problems = rulesProblems(document.rules);
  if (problems.length > 0) throw new PolicyCompileError(problems);
  const dry = document.mode === 'dry_run';
  const limits: CompiledRule[] = [];
  const denies: CompiledRule[] = [];
  const allows: CompiledRule[] = [];
  for (const rule of document.rules as PolicyRule[]) {
    if (rule.limit) {
      limits.push({
        name: rule.name,
        host: literalHost(rule.limit.match),
        test: rule.limit.match ? compileMatcher(rule.limit.match) : null,
        blocked: blockedDecision('rate_limit', rule.name, rule.name, dry),
        limiter: new RateLimiter(rule.limit.calls_per_minute),
        perEndpoint: rule.limit.per === 'endpoint',
      });
    } else if (rule.deny) {
      denies.push({ name: rule.name, host: literalHost(rule.deny), test: compileMatcher(rule.deny), blocked: blockedDecision('rule', rule.name, rule.name, dry) });
    } else if (rule.allow) {
      allows.push({ name: rule.name, host: literalHost(rule.allow), test: compileMatcher(rule.allow), blocked: freeze({ allowed: true, reason: null, rule: rule.name, denyReason: null, dryRun: false }) });
    }
  }
  const limitIndex = new HostIndex(limits);
  const denyIndex = new HostIndex(denies);
  const allowIndex = new HostIndex(allows);
  const defaultDecision = document.default === 'allow' ? ALLOW_DECISION : blockedDecision('default', null, 'default', dry);

  return {
    mode: document.mode,
    ruleCount: document.rules.length,
    usesBody: (document.rules as PolicyRule[]).some((r) => (r.allow ?? r.deny ?? r.limit?.match)?.body !== undefined),
    evaluate(req, options) {
      if (options?.killSwitch) return KILL_SWITCH_DECISION;
      const host = req.host.toLowerCase();
      const target = globTarget(host, req.path);
      const hostLimits = limitIndex.rulesFor(host);
      if (hostLimits.length > 0) {
        const now = options?.now ?? Date.now();
        for (const rule of hostLimits) {
          if (rule.test && !rule.test(req, target)) continue;
          const key = rule.perEndpoint ? (req.endpoint ?? `${req.method} ${target}`) : '';
          if (!rule.limiter?.take(key, now)) return rule.blocked;
        }
      }
      for (const rule of denyIndex.rulesFor(host)) if (rule.test?.(req, target)) return rule.blocked;
      for (const rule of allowIndex.rulesFor(host)) if (rule.test?.(req, target)) return rule.blocked;
      return defaultDecision;
    },
  };
}
