import { Type, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/**
 * A string that is one of `values`, as a single JSON-schema `enum`. A union of literals would
 * be an `anyOf` of `const`s, and a wrong value would get one error per branch; one `enum` gets
 * one error that can list the allowed values. The static type stays the union of the literals.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/**
 * A schema keyword the server's validator implements: the string is replaced by its lower-case
 * form once it is read, so what is case-insensitive (UUIDs) reaches handlers in one spelling.
 */
export const LOWERCASE_KEYWORD = 'x-lowercase';

/**
 * A schema keyword naming the OpenAPI component that documents a field the route takes as any
 * object because its service checks it (so errors can speak the terms of that document). The
 * OpenAPI document shows such a field as a `$ref` to the component.
 */
export const COMPONENT_KEYWORD = 'x-component';

/** UUIDs are case-insensitive: either case is accepted, and the server reads them lower-cased. */
export const Uuid = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'UUID, either case; stored and returned lowercase',
  [LOWERCASE_KEYWORD]: true,
});
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
