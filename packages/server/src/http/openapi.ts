import {
  Agent, Alert, AlertHistoryRecord, AlertNotification, AlertWithSecret, ApiKey, ApiKeyScope, AuditEntry, BodyMatch, COMPONENT_KEYWORD, CreatedApiKey, DashboardEvent, DsseEnvelope, ErrorBody, FieldError,
  GenAiInfo, HeaderMatch, Matcher, NotificationAttempt, PolicyBundle, PolicyDocument, PolicyDocumentInput, PolicyKey, PolicyRule, PolicyVersion,
  RateLimit, TelemetryEvent, WebhookPayload,
} from '@corral/contracts';
import swagger from '@fastify/swagger';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

/**
 * The shared schemas, named in `components.schemas`. Wherever a route's schema (or another
 * component) holds one of them, the document says `$ref` instead of repeating it, so clients
 * generate one type per name.
 */
const components: Record<string, TSchema> = {
  Agent, ApiKey, ApiKeyScope, CreatedApiKey, AuditEntry, PolicyDocumentInput, PolicyDocument, PolicyRule, Matcher, HeaderMatch, BodyMatch,
  RateLimit, PolicyVersion, DsseEnvelope, PolicyBundle, PolicyKey, TelemetryEvent, DashboardEvent, GenAiInfo, ErrorBody, FieldError,
  Alert, AlertWithSecret, AlertHistoryRecord, AlertNotification, NotificationAttempt,
  // No route returns it: it is what webhook receivers get, named here so clients can type it.
  WebhookPayload,
};

const COMPONENTS_PATH = '#/components/schemas/';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A copy of `node` with every schema equal to a component replaced by its `$ref`, and every
 * field marked with COMPONENT_KEYWORD (taken as any object, checked by its service) shown as the
 * component it names. Equality is by JSON text: @fastify/swagger converts route schemas and
 * components alike, so a component that a route holds comes out the same as the component.
 */
function withRefs(node: Json, named: ReadonlyMap<string, string>, self?: string): Json {
  if (Array.isArray(node)) return node.map((item) => withRefs(item, named, self));
  if (!isObject(node)) return node;
  const marked = node[COMPONENT_KEYWORD];
  if (typeof marked === 'string') {
    return { $ref: `${COMPONENTS_PATH}${marked}`, ...(typeof node.description === 'string' ? { description: node.description } : {}) };
  }
  const name = named.get(JSON.stringify(node));
  if (name !== undefined && name !== self) return { $ref: `${COMPONENTS_PATH}${name}` };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withRefs(value, named, self)]));
}

/**
 * A query parameter with a default may be left out (the server fills it in), so it is not
 * `required` in the document, whatever its TypeBox object says; generated clients then let
 * callers omit it.
 */
function defaultsOptional(node: Json): Json {
  if (Array.isArray(node)) return node.map(defaultsOptional);
  if (!isObject(node)) return node;
  if (node.in === 'query' && node.required === true && isObject(node.schema) && 'default' in node.schema) return { ...node, required: false };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, defaultsOptional(value)]));
}

/** The generated document with the shared schemas referred to by name. */
function referToComponents(document: JsonObject): JsonObject {
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const named = new Map(Object.entries(schemas).map(([name, schema]) => [JSON.stringify(schema), name]));
  const componentsWithRefs = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, withRefs(schema, named, name)]));
  return {
    ...document,
    components: { ...(isObject(document.components) ? document.components : {}), schemas: componentsWithRefs },
    paths: defaultsOptional(withRefs(document.paths ?? {}, named)),
  };
}

/**
 * The OpenAPI document is generated from the route schemas, never written by hand; register
 * this before any route.
 */
export async function installOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Corral API',
        version,
        description: 'Control plane and telemetry service for AI agents. Errors use the body `{"error": {"code", "message", "details"}}` (ErrorBody).',
      },
      components: {
        // TypeBox marks its schemas with symbols; the document wants plain JSON.
        schemas: JSON.parse(JSON.stringify(components)) as Record<string, JsonObject>,
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKey: [] }],
    },
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      return referToComponents(document.openapiObject as JsonObject);
    },
  });
}
