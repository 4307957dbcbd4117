import { type TSchema, Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { describeSchemaErrors, type FieldProblem } from './validation-errors.js';

// The server's settings: every error reported, unknown keywords allowed.
const ajv = new Ajv({ allErrors: true, strict: false });

function problemsOf(schema: TSchema, value: unknown): FieldProblem[] {
  const validate = ajv.compile(schema);
  expect(validate(value)).toBe(false);
  return describeSchemaErrors(validate.errors ?? []);
}

const Literals = Type.Union([Type.Literal('allowed'), Type.Literal('denied'), Type.Literal('error')]);
const Enum = Type.Unsafe<string>({ type: 'string', enum: ['allowed', 'denied', 'error'] });

describe('validation messages', () => {
  it('merges a union of literals into one message listing the values', () => {
    const schema = Type.Object({ events: Type.Array(Type.Object({ policy_result: Literals })) });
    expect(problemsOf(schema, { events: [{ policy_result: 'maybe' }] })).toEqual([
      { path: ['events', '0', 'policy_result'], message: 'must be one of allowed, denied, error' },
    ]);
  });

  it('says the same for an enum, whatever the wrong value is', () => {
    for (const wrong of ['maybe', 5, null]) {
      expect(problemsOf(Type.Object({ r: Enum }), { r: wrong }), String(wrong)).toEqual([{ path: ['r'], message: 'must be one of allowed, denied, error' }]);
    }
  });

  it('names the types a union of types takes', () => {
    const schema = Type.Object({ status_code: Type.Union([Type.Integer({ maximum: 599 }), Type.Null()]) });
    expect(problemsOf(schema, { status_code: 'x' })).toEqual([{ path: ['status_code'], message: 'must be an integer or null' }]);
    const scalar = Type.Object({ exact: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]) });
    expect(problemsOf(scalar, { exact: {} })).toEqual([{ path: ['exact'], message: 'must be a string, a number, a boolean or null' }]);
  });

  it('reports only the branch the value fitted when its type matched one', () => {
    const schema = Type.Object({ status_code: Type.Union([Type.Integer({ maximum: 599 }), Type.Null()]) });
    expect(problemsOf(schema, { status_code: 600 })).toEqual([{ path: ['status_code'], message: 'must be <= 599' }]);
    const text = Type.Object({ d: Type.Union([Type.String({ maxLength: 3 }), Type.Null()]) });
    expect(problemsOf(text, { d: 'long' })).toEqual([{ path: ['d'], message: 'must NOT have more than 3 characters' }]);
  });

  it('merges nested unions', () => {
    const schema = Type.Object({ mode: Type.Union([Type.Union([Type.Literal('enforce'), Type.Literal('dry_run')]), Type.Null()]) });
    expect(problemsOf(schema, { mode: 'x' })).toEqual([{ path: ['mode'], message: 'must be one of enforce, dry_run or null' }]);
  });

  it('merges what object branches say about the same field', () => {
    const scope = Type.Union([
      Type.Object({ kind: Type.Literal('all') }, { additionalProperties: false }),
      Type.Object({ kind: Type.Literal('read_only') }, { additionalProperties: false }),
    ]);
    expect(problemsOf(Type.Object({ scope }), { scope: { kind: 'bogus' } })).toEqual([{ path: ['scope', 'kind'], message: 'must be one of all, read_only' }]);
    expect(problemsOf(Type.Object({ scope }), { scope: 5 })).toEqual([{ path: ['scope'], message: 'must be an object' }]);
  });

  it('names missing and unknown fields, and keeps one problem per field in order', () => {
    const schema = Type.Object({ a: Type.String(), b: Type.Integer() }, { additionalProperties: false });
    expect(problemsOf(schema, { b: 'x', zz: 1 })).toEqual([
      { path: ['a'], message: 'is required' },
      { path: ['zz'], message: 'is not a known field' },
      { path: ['b'], message: 'must be an integer' },
    ]);
  });

  it('keeps each array element its own field', () => {
    const schema = Type.Array(Type.Object({ r: Literals }));
    const problems = problemsOf(schema, [{ r: 'a' }, { r: 'allowed' }, { r: 'b' }]);
    expect(problems).toEqual([
      { path: ['0', 'r'], message: 'must be one of allowed, denied, error' },
      { path: ['2', 'r'], message: 'must be one of allowed, denied, error' },
    ]);
  });

  it('unescapes JSON-pointer segments and shows values that are not plain words as JSON', () => {
    const schema = Type.Object({ 'a/b': Type.Union([Type.Literal(''), Type.Literal(1)]) });
    expect(problemsOf(schema, { 'a/b': 'x' })).toEqual([{ path: ['a/b'], message: 'must be one of "", 1' }]);
  });
});
