/**
 * The OpenAPI 3.1 document of the entity API, generated from the registry (every entity type, every
 * aspect and its JSON Schema), for both families: `/openapi/v2/entity` and `/openapi/v3/entity`.
 */
import { registry, type AspectSpec, type EntitySpec } from '../../registry/registry.ts';
import type { ApiVersion } from './shapes.ts';

type Obj = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const json = (schema: Obj) => ({ 'application/json': { schema } });

const param = (name: string, where: 'path' | 'query', schema: Obj, description: string, required = where === 'path') => ({
  name,
  in: where,
  required,
  description,
  schema,
});

const urnParam = param('urn', 'path', { type: 'string' }, 'The entity URN, percent-encoded');
const sysMeta = param('systemMetadata', 'query', { type: 'boolean', default: false }, 'Include system metadata and audit stamps');

const errors = {
  '400': { description: 'Invalid input: `{"error":"Validation Error","message":…}` or `{"error":"Invalid urn!: …"}`', content: json(ref('Error')) },
  '401': { description: 'Missing or invalid bearer token', content: json(ref('Error')) },
  '403': { description: 'The token role does not permit this operation', content: json(ref('Error')) },
};

function aspectSchemaName(a: AspectSpec): string {
  return `${cap(a.name)}Aspect`;
}

function wrapperSchema(a: AspectSpec): Obj {
  return {
    type: 'object',
    properties: { value: ref(aspectSchemaName(a)), systemMetadata: ref('SystemMetadata'), auditStamp: ref('AuditStamp') },
    required: ['value'],
  };
}

function entitySchema(v: ApiVersion, e: EntitySpec): Obj {
  const aspects = Object.fromEntries(registry.aspectsOf(e).map((a) => [a.name, wrapperSchema(a)]));
  if (v === 'v3') return { type: 'object', properties: { urn: { type: 'string' }, ...aspects }, required: ['urn'] };
  return { type: 'object', properties: { urn: { type: 'string' }, aspects: { type: 'object', properties: aspects } }, required: ['urn'] };
}

function entityPaths(v: ApiVersion, e: EntitySpec): Obj {
  const base = `/openapi/${v}/entity/${e.name}`;
  const tag = `${v} ${e.name}`;
  const entityRef = ref(`${cap(e.name)}Entity${v.toUpperCase()}`);
  const aspectNames = registry.aspectsOf(e).map((a) => a.name);
  const paths: Obj = {
    [base]: {
      get: {
        tags: [tag],
        summary: `List ${e.name} entities in URN order`,
        parameters: [
          param('aspects', 'query', { type: 'array', items: { type: 'string', enum: aspectNames } }, 'Aspects to return (all when absent)'),
          param('count', 'query', { type: 'integer', default: 10, maximum: 1000 }, 'Page size (clamped to 1000)'),
          param('scrollId', 'query', { type: 'string' }, 'Scroll id from the previous page'),
          param('sort', 'query', { type: 'string', default: 'urn', enum: ['urn'] }, 'Sort field'),
          param('sortOrder', 'query', { type: 'string', enum: ['ASCENDING', 'DESCENDING'], default: 'ASCENDING' }, 'Sort order'),
          param('query', 'query', { type: 'string', default: '*' }, 'Query string'),
          param('includeSoftDelete', 'query', { type: 'boolean', default: false }, 'Include soft-deleted entities'),
          sysMeta,
        ],
        responses: {
          '200': {
            description: 'A page of entities',
            content: json({
              type: 'object',
              properties: { scrollId: { type: ['string', 'null'] }, [v === 'v3' ? 'entities' : 'results']: { type: 'array', items: entityRef } },
            }),
          },
          ...errors,
        },
      },
      post: {
        tags: [tag],
        summary: `Create or update ${e.name} entities (batch)`,
        parameters: [param('async', 'query', { type: 'boolean', default: true }, '202 with URNs only when true'), sysMeta],
        requestBody: { required: true, content: json({ type: 'array', items: entityRef }) },
        responses: { '200': { description: 'Written entities', content: json({ type: 'array', items: entityRef }) }, '202': { description: 'Accepted: `[{"urn"}]`' }, ...errors },
      },
    },
    [`${base}/{urn}`]: {
      get: {
        tags: [tag],
        summary: `Get a ${e.name}`,
        parameters: [urnParam, param('aspects', 'query', { type: 'array', items: { type: 'string', enum: aspectNames } }, 'Aspects to return'), sysMeta],
        responses: { '200': { description: 'The entity', content: json(entityRef) }, '404': { description: 'Not found (header Not-Found-Reason)' }, ...errors },
      },
      head: {
        tags: [tag],
        summary: `Does this ${e.name} exist`,
        parameters: [urnParam, param('includeSoftDelete', 'query', { type: 'boolean', default: false }, 'Count soft-deleted entities')],
        responses: { '204': { description: 'Exists' }, '404': { description: 'Does not exist' } },
      },
      delete: {
        tags: [tag],
        summary: `Hard-delete a ${e.name} (admin), or only the listed aspects`,
        parameters: [
          urnParam,
          param('aspects', 'query', { type: 'array', items: { type: 'string', enum: aspectNames } }, 'Delete only these aspects'),
          param('clear', 'query', { type: 'boolean', default: false }, 'Delete every aspect but the key'),
        ],
        responses: { '200': { description: 'Deleted (also when it did not exist); empty body' }, ...errors },
      },
    },
  };
  for (const a of registry.aspectsOf(e)) {
    const body = v === 'v3' ? { type: 'object', properties: { value: ref(aspectSchemaName(a)), systemMetadata: ref('SystemMetadata') }, required: ['value'] } : ref(aspectSchemaName(a));
    const single = v === 'v2' ? wrapperSchema(a) : { type: 'object', properties: { urn: { type: 'string' }, [a.name]: wrapperSchema(a) } };
    const written = v === 'v2' ? { type: 'object', properties: { urn: { type: 'string' }, aspects: { type: 'object', properties: { [a.name]: wrapperSchema(a) } } } } : single;
    paths[`${base}/{urn}/${a.name}`] = {
      get: {
        tags: [tag],
        summary: `Get the ${a.name} aspect${a.timeseries ? ' (latest entry of the time series)' : ''}`,
        parameters: [urnParam, param('version', 'query', { type: 'integer', default: 0 }, '0 = latest'), sysMeta],
        responses: { '200': { description: 'The aspect', content: json(single) }, '404': { description: 'Not found' }, ...errors },
      },
      head: { tags: [tag], summary: `Does the ${a.name} aspect exist`, parameters: [urnParam], responses: { '204': { description: 'Exists' }, '404': { description: 'Absent' } } },
      post: {
        tags: [tag],
        summary: `Create or update the ${a.name} aspect`,
        parameters: [
          urnParam,
          param('createIfNotExists', 'query', { type: 'boolean', default: true }, 'Fail (412) when the aspect exists; pass false to update'),
          param('createIfEntityNotExists', 'query', { type: 'boolean', default: false }, 'Fail (412) when the entity exists'),
          param('async', 'query', { type: 'boolean', default: false }, 'Answer 202'),
          sysMeta,
        ],
        requestBody: { required: true, content: json(body) },
        responses: { '200': { description: 'Written', content: json(written) }, '412': { description: 'A CREATE precondition failed' }, ...errors },
      },
      ...(a.timeseries || a.keyOf
        ? {}
        : {
            patch: {
              tags: [tag],
              summary: `JSON Patch the ${a.name} aspect`,
              parameters: [urnParam, sysMeta],
              requestBody: { required: true, content: { 'application/json-patch+json': { schema: ref('PatchBody') }, 'application/json': { schema: ref('PatchBody') } } },
              responses: { '200': { description: 'The patched aspect', content: json(written) }, ...errors },
            },
          }),
      delete: { tags: [tag], summary: `Delete the ${a.name} aspect`, parameters: [urnParam], responses: { '200': { description: 'Deleted; empty body' }, ...errors } },
    };
  }
  return paths;
}

/** Builds the whole document. */
export function openapiDocument(): Obj {
  const schemas: Obj = {
    Error: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } }, required: ['error'] },
    SystemMetadata: { type: 'object', properties: { lastObserved: { type: 'integer' }, runId: { type: 'string' } }, additionalProperties: true },
    AuditStamp: { type: 'object', properties: { time: { type: 'integer' }, actor: { type: 'string' } } },
    PatchBody: {
      type: 'object',
      properties: {
        patch: {
          type: 'array',
          items: {
            type: 'object',
            properties: { op: { enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] }, path: { type: 'string' }, value: {}, from: { type: 'string' } },
            required: ['op', 'path'],
          },
        },
        arrayPrimaryKeys: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      },
      required: ['patch'],
    },
  };
  const paths: Obj = {};
  for (const e of registry.entities) {
    for (const a of registry.aspectsOf(e)) schemas[aspectSchemaName(a)] = a.schema;
    for (const v of ['v2', 'v3'] as const) {
      schemas[`${cap(e.name)}Entity${v.toUpperCase()}`] = entitySchema(v, e);
      Object.assign(paths, entityPaths(v, e));
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc metadata catalog', version: '0.1.0', description: 'Entities and their aspects. v3 wraps aspects as {"value": …}; v2 nests them under "aspects".' },
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas },
    paths,
  };
}
