import { Type, type Static } from '@sinclair/typebox';
import { ApiKeyScope } from './auth.js';
import { NullableTimestamp, StringEnum, Timestamp, Uuid } from './common.js';

const environments = ['live', 'test'] as const;

export const ApiKey = Type.Object(
  {
    id: Uuid,
    org_id: Uuid,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    key_prefix: Type.String(),
    environment: StringEnum(environments),
    scope: ApiKeyScope,
    last_used_at: NullableTimestamp,
    expires_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
    created_at: Timestamp,
  },
);
export type ApiKey = Static<typeof ApiKey>;

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    scope: ApiKeyScope,
    environment: Type.Optional(StringEnum(environments, { default: 'live' })),
    expires_at: Type.Optional(Type.Union([Timestamp, Type.Null()], { description: 'When the key stops working; null or absent: never' })),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const CreatedApiKey = Type.Object({
  id: Uuid,
  name: Type.String(),
  key: Type.String({ description: 'The full key. Shown only in this response.' }),
  key_prefix: Type.String(),
  scope: ApiKeyScope,
  environment: StringEnum(environments),
  expires_at: NullableTimestamp,
  created_at: Timestamp,
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;
