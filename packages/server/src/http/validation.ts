import type { FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
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

/**
 * Query strings and path parameters are text, so they are coerced ("20" → 20); bodies are JSON
 * and are not: `"limit": "20"` in a body is a wrong type and a 400.
 */
export function installValidation(app: FastifyInstance): void {
  const textAjv = makeAjv('array');
  const bodyAjv = makeAjv(false);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));
}
