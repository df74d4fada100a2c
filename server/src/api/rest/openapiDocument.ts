/**
 * The OpenAPI 3.1 document of svc's HTTP API, assembled from what the routes declare: each route
 * module's table of operations (openapi/operations.ts), and the entity routes' operations generated
 * per entity type from the registry (entityOperations.ts), with the schemas they refer to by name
 * (openapi/schemas.ts) and the responses and parameters they share (openapi/parts.ts).
 */
import { PATCH_BODY } from '../../entities/jsonPatch.ts';
import { HEALTH_API } from '../health.ts';
import { addEntityApi } from './entityOperations.ts';
import { OPERATIONS_API } from './operationsRoutes.ts';
import { RESTLI_CONFIG_API } from './restliProtocol.ts';
import { RESTLI_API } from './restliRoutes.ts';
import { SEARCH_DELIVERY_API } from './searchDeliveryRoutes.ts';
import { TASK_API } from './taskRoutes.ts';
import { TIMESERIES_API } from './timeseriesRoutes.ts';
import { TIMELINE_API, TIMELINE_SCHEMAS } from './timelineRoutes.ts';
import { TOKEN_API } from './tokenRoutes.ts';
import { documentPaths, type Operations } from './openapi/operations.ts';
import { REASON, RESPONSES, type Obj } from './openapi/parts.ts';
import { routeSchemas } from './openapi/schemas.ts';

/** The route modules' operations, in the document's order (after the entity routes'). */
export const ROUTE_TABLES: readonly Operations[] = [TOKEN_API, TASK_API, TIMESERIES_API, TIMELINE_API, SEARCH_DELIVERY_API, OPERATIONS_API, HEALTH_API, RESTLI_CONFIG_API, RESTLI_API];

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
  Object.assign(paths, documentPaths(ROUTE_TABLES));
  Object.assign(schemas, routeSchemas(), TIMELINE_SCHEMAS);
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
