/**
 * The OpenAPI operations of the entity routes (entityRoutes.ts), generated from the registry (every
 * entity type, every aspect and its JSON Schema), for both families: `/openapi/v2/entity` and
 * `/openapi/v3/entity`. The routes serve any entity type and aspect (`/:entityName/:urn/:aspectName`);
 * the document has a path for each.
 */
import { registry, type AspectSpec, type EntitySpec } from '../../registry/registry.ts';
import { MAX_SCHEMA_FIELD_URN_BYTES, MAX_URN_BYTES } from '../../contract/urn.ts';
import { ENTITY_QUERIES } from './entityRoutes.ts';
import { ASPECT_BODY, BATCH_ASPECT_BODY, type ApiVersion } from './shapes.ts';
import { type Obj, ref, cap, json, param, response, errors, writeErrors, notFound, headErrors, bodyErrors, shared } from './openapi/parts.ts';

/** The URN in a path: at most MAX_URN_BYTES encoded (schema fields' URNs, which name a dataset and a field path, MAX_SCHEMA_FIELD_URN_BYTES). */
function urnParamOf(e: EntitySpec): Obj {
  const max = e.name === 'schemaField' ? MAX_SCHEMA_FIELD_URN_BYTES : MAX_URN_BYTES;
  return param('urn', 'path', { type: 'string', maxLength: max }, `The entity URN, percent-encoded (at most ${max} bytes encoded)`);
}

function aspectSchemaName(a: AspectSpec): string {
  return `${cap(a.name)}Aspect`;
}

/**
 * An aspect's schema as a component: the named types it uses (`definitions`, by Pegasus name, e.g.
 * `com.linkedin.common.AuditStamp`) become components of their own, shared by every aspect using them.
 */
function aspectComponent(a: AspectSpec, schemas: Obj): Obj {
  const { definitions, ...schema } = a.schema as Obj & { definitions?: Record<string, Obj> };
  for (const [name, d] of Object.entries(definitions ?? {})) schemas[name] ??= toComponentRefs(d);
  return toComponentRefs(schema) as Obj;
}

/** A schema with its `#/definitions/<name>` references made `#/components/schemas/<name>`. */
function toComponentRefs(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toComponentRefs);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k, k === '$ref' && typeof x === 'string' ? x.replace(/^#\/definitions\//, '#/components/schemas/') : toComponentRefs(x)]),
  );
}

/** The body of a write of `a` (v3's {@link ASPECT_BODY}, or a batch's {@link BATCH_ASPECT_BODY}), its value being that aspect. */
function aspectBodySchema(a: AspectSpec, body: Obj & { properties: Obj } = ASPECT_BODY): Obj {
  return { ...body, properties: { ...body.properties, value: ref(aspectSchemaName(a)), systemMetadata: ref('SystemMetadata') } };
}

/** The body of a batch write of `e` entities: each aspect as {@link aspectBodySchema}. */
function batchBodySchema(v: ApiVersion, e: EntitySpec): Obj {
  const aspects = Object.fromEntries(registry.aspectsOf(e).map((a) => [a.name, ref(`${aspectSchemaName(a)}BatchBody`)]));
  const urn = { type: 'string', description: 'The entity URN' };
  const item =
    v === 'v3'
      ? { type: 'object', properties: { urn, ...aspects }, required: ['urn'], minProperties: 2, additionalProperties: false }
      : { type: 'object', properties: { urn, aspects: { type: 'object', properties: aspects, minProperties: 1, additionalProperties: false } }, required: ['urn', 'aspects'], additionalProperties: false };
  return { type: 'array', items: item };
}

function wrapperSchema(a: AspectSpec): Obj {
  return {
    type: 'object',
    properties: { value: ref(aspectSchemaName(a)), systemMetadata: ref('SystemMetadata'), auditStamp: ref('AuditStamp') },
    required: ['value'],
  };
}

function entitySchema(v: ApiVersion, e: EntitySpec): Obj {
  const aspects = Object.fromEntries(registry.aspectsOf(e).map((a) => [a.name, ref(`${aspectSchemaName(a)}Wrapper`)]));
  if (v === 'v3') return { type: 'object', properties: { urn: { type: 'string' }, ...aspects }, required: ['urn'] };
  return { type: 'object', properties: { urn: { type: 'string' }, aspects: { type: 'object', properties: aspects } }, required: ['urn'] };
}

function entityPaths(v: ApiVersion, e: EntitySpec, parameters: Obj): Obj {
  const base = `/openapi/${v}/entity/${e.name}`;
  const tag = `${v} ${e.name}`;
  const id = (verb: string, aspect = '') => `${v}${verb}${cap(e.name)}${cap(aspect)}`;
  const entityRef = ref(`${cap(e.name)}Entity${v.toUpperCase()}`);
  const aspectNames = registry.aspectsOf(e).map((a) => a.name);
  const q = ENTITY_QUERIES;
  const [urnParam] = shared(parameters, e.name === 'schemaField' ? 'schemaField' : 'entity', [urnParamOf(e)]);
  const aspectQueries = (name: 'getAspect' | 'headAspect' | 'patchAspect', list = q[name]) => shared(parameters, name, list.openapi());
  const paths: Obj = {
    [base]: {
      get: {
        tags: [tag],
        operationId: id('List'),
        summary: `List ${e.name} entities in URN order (or by a date field: sort)`,
        parameters: q.list.openapi(aspectNames),
        responses: {
          '200': {
            description: 'A page of entities',
            content: json({
              type: 'object',
              properties: {
                scrollId: v === 'v3' ? { type: ['string', 'null'], description: 'null on the last page' } : { type: 'string', description: 'Absent on the last page' },
                [v === 'v3' ? 'entities' : 'results']: { type: 'array', items: entityRef },
              },
            }),
          },
          ...errors,
        },
      },
      post: {
        tags: [tag],
        operationId: id('BatchUpsert'),
        summary: `Create or update ${e.name} entities (batch, all or nothing)`,
        parameters: q.batch.openapi(),
        requestBody: { required: true, content: json(batchBodySchema(v, e)) },
        responses: {
          '200': { description: 'Written entities', content: json({ type: 'array', items: entityRef }) },
          '202': { description: 'Written (async=true, the default): the URN of each entity', content: json({ type: 'array', items: { type: 'object', properties: { urn: { type: 'string' } }, required: ['urn'] } }) },
          '412': { description: 'An aspect\'s If-Version-Match does not hold: `{"error":"Validation Error","message":"Expected version <sent>, actual version <n>"}`; nothing is written', content: json(ref('Error')) },
          ...writeErrors,
          ...bodyErrors,
        },
      },
    },
    [`${base}/{urn}`]: {
      get: {
        tags: [tag],
        operationId: id('Get'),
        summary: `Get a ${e.name}`,
        parameters: [urnParam, ...q.getEntity.openapi(aspectNames)],
        responses: { '200': { description: 'The entity', content: json(entityRef) }, '404': notFound, ...errors },
      },
      head: {
        tags: [tag],
        operationId: id('Exists'),
        summary: `Does this ${e.name} exist`,
        parameters: [urnParam, ...q.headEntity.openapi()],
        responses: { '204': { description: 'Exists' }, '404': { description: 'Does not exist' }, ...headErrors },
      },
      delete: {
        tags: [tag],
        operationId: id('Delete'),
        summary: `Hard-delete a ${e.name} (admin), or only the listed aspects`,
        parameters: [urnParam, ...q.deleteEntity.openapi(aspectNames)],
        responses: { '200': { description: 'Deleted (also when it did not exist); empty body' }, ...writeErrors },
      },
    },
  };
  for (const a of registry.aspectsOf(e)) {
    const body = v === 'v3' ? ref(`${aspectSchemaName(a)}Body`) : ref(aspectSchemaName(a));
    const single = v === 'v2' ? ref(`${aspectSchemaName(a)}Wrapper`) : ref(`${aspectSchemaName(a)}ReadV3`);
    const written = v === 'v2' ? ref(`${aspectSchemaName(a)}WrittenV2`) : single;
    paths[`${base}/{urn}/${a.name}`] = {
      get: {
        tags: [tag],
        operationId: id('Get', a.name),
        summary: `Get the ${a.name} aspect${a.timeseries ? ' (latest entry of the time series)' : ''}`,
        parameters: [urnParam, ...aspectQueries('getAspect')],
        responses: { '200': { description: 'The aspect', content: json(single) }, '404': notFound, ...errors },
      },
      head: {
        tags: [tag],
        operationId: id('Exists', a.name),
        summary: `Does the ${a.name} aspect exist`,
        parameters: [urnParam, ...aspectQueries('headAspect')],
        responses: { '204': { description: 'Exists' }, '404': { description: 'Absent' }, ...headErrors },
      },
      post: {
        tags: [tag],
        operationId: id('Write', a.name),
        summary:
          v === 'v3'
            ? `Create the ${a.name} aspect; with createIfNotExists=false, create or update it`
            : `Create or update the ${a.name} aspect; with createIfNotExists=true, only create it`,
        parameters: [urnParam, ...shared(parameters, `postAspect.${v}`, q.postAspect[v].openapi())],
        requestBody: { required: true, content: json(body) },
        responses: {
          '200': { description: 'Written', content: json(written) },
          '202': { description: 'Written, with async=true', content: json(written) },
          '412': response(v === 'v3' ? 'CreatePreconditionV3' : 'CreatePreconditionV2'),
          ...writeErrors,
          ...bodyErrors,
        },
      },
      ...(a.timeseries || a.keyOf
        ? {}
        : {
            patch: {
              tags: [tag],
              operationId: id('Patch', a.name),
              summary: `JSON Patch the ${a.name} aspect`,
              parameters: [urnParam, ...aspectQueries('patchAspect')],
              requestBody: { required: true, content: { 'application/json-patch+json': { schema: ref('PatchBody') }, 'application/json': { schema: ref('PatchBody') } } },
              responses: {
                '200': { description: 'The patched aspect', content: json(written) },
                '202': { description: 'Patched, with async=true', content: json(written) },
                '412': response('PatchPrecondition'),
                ...writeErrors,
                ...bodyErrors,
              },
            },
          }),
      delete: {
        tags: [tag],
        operationId: id('Delete', a.name),
        summary: `Delete the ${a.name} aspect`,
        parameters: [urnParam],
        responses: { '200': { description: 'Deleted; empty body' }, ...writeErrors },
      },
    };
  }
  return paths;
}

/**
 * The entity API's schemas and paths, added to the document's: per aspect its schema (the named types
 * it uses as components of their own), its write bodies and wrappers; per entity type and family (v2,
 * v3) its entity schema and paths; shared parameters into `parameters`.
 */
export function addEntityApi(schemas: Obj, paths: Obj, parameters: Obj): void {
  for (const e of registry.entities) {
    for (const a of registry.aspectsOf(e)) {
      const name = aspectSchemaName(a);
      if (schemas[name]) continue;
      schemas[name] = aspectComponent(a, schemas);
      schemas[`${name}Body`] = aspectBodySchema(a);
      schemas[`${name}BatchBody`] = aspectBodySchema(a, BATCH_ASPECT_BODY);
      schemas[`${name}Wrapper`] = wrapperSchema(a);
      schemas[`${name}ReadV3`] = { type: 'object', properties: { urn: { type: 'string' }, [a.name]: ref(`${name}Wrapper`) } };
      schemas[`${name}WrittenV2`] = { type: 'object', properties: { urn: { type: 'string' }, aspects: { type: 'object', properties: { [a.name]: ref(`${name}Wrapper`) } } } };
    }
    for (const v of ['v2', 'v3'] as const) {
      schemas[`${cap(e.name)}Entity${v.toUpperCase()}`] = entitySchema(v, e);
      Object.assign(paths, entityPaths(v, e, parameters));
    }
  }
}
