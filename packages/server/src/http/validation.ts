import type { FastifyInstance } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    // Unknown fields are refused (400), not silently dropped: a typo must not pass as success.
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

/** Whether any string or key in a parsed value holds U+0000: a plain scan, cheap on 1,000-event batches. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasNul);
  for (const key in value) if (key.includes('\u0000') || hasNul((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** The JSON pointer of the first string or key holding U+0000; only called once one is known to exist. */
function nulAt(value: unknown, at: string): string {
  if (typeof value !== 'object' || value === null) return at;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return `${at}/${key}`;
    if (hasNul(item)) return nulAt(item, `${at}/${key}`);
  }
  return at;
}

/**
 * Text holding U+0000 is refused like any other bad value: PostgreSQL cannot store it in a text
 * column, so letting it through would be a 500 on one engine and silent success on the other.
 */
function refusingNul(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown, ctx?: Parameters<ValidateFunction>[1]) => {
    if (!validate(data, ctx)) {
      wrapped.errors = validate.errors;
      return false;
    }
    if (!hasNul(data)) return true;
    wrapped.errors = [{ instancePath: nulAt(data, ''), schemaPath: '', keyword: 'nul', params: {}, message: 'must not contain NUL characters' }];
    return false;
  }) as ValidateFunction;
  return Object.assign(wrapped, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}

/**
 * Query strings and path parameters are text, so they are coerced ("20" → 20); bodies are JSON
 * and are not: `"limit": "20"` in a body is a wrong type and a 400.
 */
export function installValidation(app: FastifyInstance): void {
  const textAjv = makeAjv('array');
  const bodyAjv = makeAjv(false);
  app.setValidatorCompiler(({ schema, httpPart }) => refusingNul((httpPart === 'body' ? bodyAjv : textAjv).compile(schema)));
}
