import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const Uuid = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'UUID, lowercase' });
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 timestamp (UTC)' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const Success = Type.Object({ success: Type.Literal(true) });
export type Success = Static<typeof Success>;

export const IdParams = <K extends string>(name: K) => Type.Object({ [name]: Uuid } as { [P in K]: typeof Uuid });

/** `limit` and `cursor` for item lists; the maximum differs per list (interface section 8). */
export const PageQuery = (defaultLimit: number, maxLimit: number) =>
  Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Opaque cursor from next_cursor' })),
  });

/** The list envelope every list endpoint returns (contract section 4). */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  });
export type Page<T> = { data: T[]; has_more: boolean; next_cursor: string | null };
