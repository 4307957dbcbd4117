import { Type, type Static } from '@sinclair/typebox';
import { COMPONENT_KEYWORD, StringEnum, Timestamp, Uuid } from './common.js';
import { PolicyMode } from './agents.js';

/**
 * The policy document (contract section 6). The schemas below describe its shape; rules that a
 * JSON Schema cannot say well (exactly one of allow/deny/limit, unique names, glob and JSONPath
 * syntax) are checked by the server, which names the offending rule in every error.
 */
export const MAX_POLICY_RULES = 200;
export const httpMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'] as const;

const Text = (maxLength: number) => Type.String({ maxLength });

export const HeaderMatch = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", description: 'header name, case-insensitive' }),
    exact: Type.Optional(Text(4096)),
    prefix: Type.Optional(Text(4096)),
    contains: Type.Optional(Text(4096)),
    present: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'Exactly one of exact, prefix, contains, present' },
);
export type HeaderMatch = Static<typeof HeaderMatch>;

const JsonScalar = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean(), Type.Null()]);

export const BodyMatch = Type.Object(
  {
    jsonpath: Type.String({ minLength: 1, maxLength: 512, description: 'e.g. $.amount or $.items[0].sku' }),
    exact: Type.Optional(JsonScalar),
    in: Type.Optional(Type.Array(JsonScalar, { minItems: 1, maxItems: 1000 })),
    prefix: Type.Optional(Text(4096)),
    contains: Type.Optional(Text(4096)),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
  },
  { additionalProperties: false, description: 'One of exact, in, prefix, contains; or min and/or max' },
);
export type BodyMatch = Static<typeof BodyMatch>;

export const Matcher = Type.Object(
  {
    method: Type.Optional(Type.Array(StringEnum(httpMethods), { minItems: 1, uniqueItems: true })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'glob over host/path: `*` one segment, `**` any number' })),
    headers: Type.Optional(Type.Array(HeaderMatch, { minItems: 1, maxItems: 50 })),
    body: Type.Optional(Type.Array(BodyMatch, { minItems: 1, maxItems: 50 })),
  },
  { additionalProperties: false, description: 'Every given part must match' },
);
export type Matcher = Static<typeof Matcher>;

export const RateLimit = Type.Object(
  {
    calls_per_minute: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    per: StringEnum(['endpoint', 'global']),
    match: Type.Optional(Matcher),
  },
  { additionalProperties: false },
);
export type RateLimit = Static<typeof RateLimit>;

export const PolicyRule = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }),
    allow: Type.Optional(Matcher),
    deny: Type.Optional(Matcher),
    limit: Type.Optional(RateLimit),
  },
  { additionalProperties: false, description: 'A name and exactly one of allow, deny, limit' },
);
export type PolicyRule = Static<typeof PolicyRule>;

export const PolicyDefault = StringEnum(['allow', 'deny']);

/**
 * What a caller may send: `mode` defaults to dry_run and `rules` to none. `default` is required
 * (contract section 6): what happens to a call no rule matches must be said, not assumed.
 */
export const PolicyDocumentInput = Type.Object(
  {
    mode: Type.Optional(PolicyMode),
    default: PolicyDefault,
    rules: Type.Optional(Type.Array(PolicyRule, { maxItems: MAX_POLICY_RULES })),
  },
  { additionalProperties: false, description: 'A policy document: mode (default dry_run), default (required) and rules (default none)' },
);
export type PolicyDocumentInput = Static<typeof PolicyDocumentInput>;

/** The stored, hashed and signed form: every default filled in. */
export const PolicyDocument = Type.Object({
  mode: PolicyMode,
  default: PolicyDefault,
  rules: Type.Array(PolicyRule),
});
export type PolicyDocument = Static<typeof PolicyDocument>;

export const PolicyHash = Type.String({ pattern: '^sha256:[0-9a-f]{64}$', description: 'sha256 of the RFC 8785 canonical JSON of the policy document' });

export const PolicyVersion = Type.Object({
  id: Uuid,
  agent_id: Uuid,
  version: Type.Integer({ minimum: 1 }),
  hash: PolicyHash,
  mode: PolicyMode,
  description: Type.Union([Type.String(), Type.Null()]),
  policy: PolicyDocument,
  is_active: Type.Boolean(),
  created_at: Timestamp,
  activated_at: Type.Union([Timestamp, Type.Null()], { description: 'last time this version was made active' }),
});
export type PolicyVersion = Static<typeof PolicyVersion>;

export const CreatePolicyBody = Type.Object(
  {
    // Taken as any object here and checked by the policy service, whose errors name the rule;
    // the OpenAPI document shows the PolicyDocumentInput component.
    policy: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The policy document as JSON', [COMPONENT_KEYWORD]: 'PolicyDocumentInput' })),
    yaml_content: Type.Optional(Type.String({ minLength: 1, maxLength: 262_144, description: 'The same document as YAML' })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    activate: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false, description: 'Exactly one of policy and yaml_content' },
);
export type CreatePolicyBody = Static<typeof CreatePolicyBody>;

export const PolicyVersionParams = Type.Object({
  agent_id: Uuid,
  version: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});

/** DSSE v1 (https://github.com/secure-systems-lab/dsse). */
export const POLICY_BUNDLE_MEDIA_TYPE = 'application/vnd.corral.policy-bundle+json';

export const DsseSignature = Type.Object({ keyid: Type.String(), sig: Type.String({ description: 'base64 Ed25519 signature over the DSSE PAE' }) });
export const DsseEnvelope = Type.Object({
  payloadType: Type.String(),
  payload: Type.String({ description: 'base64 of the policy bundle JSON' }),
  signatures: Type.Array(DsseSignature, { minItems: 1 }),
});
export type DsseEnvelope = Static<typeof DsseEnvelope>;

/** The signed payload: what an SDK applies after verifying the envelope. */
export const PolicyBundle = Type.Object({
  agent_id: Uuid,
  version: Type.Integer({ minimum: 1 }),
  sequence: Type.Integer({
    minimum: 1,
    description: "Counts the agent's activations (1, 2, …, never reused): a rollback carries a higher sequence than the bundles before it, so SDKs refuse a bundle whose sequence is lower than the one applied",
  }),
  hash: PolicyHash,
  issued_at: Timestamp,
  policy: PolicyDocument,
});
export type PolicyBundle = Static<typeof PolicyBundle>;

export const PolicyKey = Type.Object({
  keyid: Type.String(),
  algorithm: Type.Literal('ed25519'),
  public_key: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'hex Ed25519 public key' }),
});
export type PolicyKey = Static<typeof PolicyKey>;
export const PolicyKeys = Type.Object({ keys: Type.Array(PolicyKey) });
export type PolicyKeys = Static<typeof PolicyKeys>;
