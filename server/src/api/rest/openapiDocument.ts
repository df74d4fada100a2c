/**
 * The OpenAPI 3.1 document of svc's HTTP API, assembled from its parts: the entity API generated from
 * the registry (openapi/entityPaths.ts), DataHub's Rest.li routes (openapi/restliPaths.ts) and svc's
 * own routes (openapi/servicePaths.ts), with the responses and parameters they share (openapi/parts.ts).
 */
import { PATCH_BODY } from '../../entities/jsonPatch.ts';
import { addEntityApi } from './openapi/entityPaths.ts';
import { REASON, RESPONSES, type Obj } from './openapi/parts.ts';
import { restliPaths, restliSchemas } from './openapi/restliPaths.ts';
import { servicePaths, serviceSchemas } from './openapi/servicePaths.ts';

/** Builds the whole document. */
export function openapiDocument(): Obj {
  const schemas: Obj = {
    Error: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' }, reason: REASON }, required: ['error'] },
    SystemMetadata: { type: 'object', properties: { lastObserved: { type: 'integer' }, runId: { type: 'string' }, version: { type: 'string', description: "The aspect's version number (1 for its first version, one more for each change), as If-Version-Match takes it; on reads and write results" } }, additionalProperties: true },
    AuditStamp: { type: 'object', properties: { time: { type: 'integer' }, actor: { type: 'string' } } },
    PatchBody: { oneOf: [PATCH_BODY, { type: 'array', items: PATCH_BODY.properties.patch.items, description: 'A bare JSON Patch array, taken as {"patch": [...]}' }] },
  };
  const paths: Obj = {};
  const parameters: Obj = {};
  addEntityApi(schemas, paths, parameters);
  Object.assign(paths, servicePaths(), restliPaths());
  Object.assign(schemas, serviceSchemas(), restliSchemas());
  return published({
    openapi: '3.1.0',
    info: { title: 'svc metadata catalog', version: '0.1.0', description: 'Entities and their aspects. v3 wraps aspects as {"value": …}; v2 nests them under "aspects".' },
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas, responses: RESPONSES, parameters },
    paths,
  }) as Obj;
}

/**
 * The document as published: a copy in which ajv-errors' `errorMessage` keyword, which the schemas
 * carry for validation, is the extension `x-errorMessage`, so that strict JSON Schema tools (and
 * generators) take the schemas as they are.
 */
function published(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(published);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k === 'errorMessage' ? 'x-errorMessage' : k, published(x)]));
}
