/**
 * The two OpenAPI families' JSON shapes. v3: aspects beside `urn`, each `{"value": …}`; v2: aspects
 * nested under `"aspects"`. System metadata and audit stamps appear only when asked for.
 */
import { SvcError } from '../../shared/errors.ts';
import type { EntityRecord, StoredAspect, WriteConditions } from '../../entities/entityService.ts';
import { compileSchema } from '../../shared/validation.ts';

export type ApiVersion = 'v2' | 'v3';

const V3_FORM = 'the v3 request body must be {"value": <aspect>, "systemMetadata"?: {...}, "headers"?: {...}}';

const IF_VERSION_MATCH = {
  type: 'string',
  pattern: '^-?[0-9]{1,16}$',
  description:
    'The version number the aspect must have for the write to go ahead: 1 for its first value, one more for each change ("-1": it must not exist); otherwise 412',
  errorMessage: 'expected the aspect\'s version number as a string of digits, e.g. "3" ("-1": the aspect must not exist)',
};
const IF_NONE_MATCH = {
  const: '*',
  description: '"*": write only if the aspect does not exist (with createIfEntityNotExists=true: the entity), and otherwise drop the write silently (200, nothing changed)',
  errorMessage: 'expected "*" (write only if the aspect does not exist)',
};

/**
 * DataHub's conditional-write headers, carried in the body beside `value`: `If-Version-Match` (the
 * version the aspect must have, else 412) and `If-None-Match: *` (a CREATE dropped silently when the
 * aspect exists).
 */
function headersSchema(names: Record<string, object>): Record<string, unknown> {
  const taken = Object.keys(names).join(', ');
  return {
    type: 'object',
    description: `Conditional-write headers: ${taken}`,
    properties: names,
    additionalProperties: false,
    errorMessage: { type: `expected an object of conditional-write headers (${taken})`, additionalProperties: `unknown header; a write takes ${taken}` },
  };
}

/** An aspect as sent with its write: `{"value", "systemMetadata"?, "headers"?}`, headers as given. */
function aspectBodyOf(headers: Record<string, unknown>, form: string) {
  return {
    type: 'object',
    properties: {
      value: { description: 'The aspect' },
      systemMetadata: { type: 'object', description: 'Kept with the aspect (runId, properties, …); lastObserved is set by the server' },
      headers,
    },
    required: ['value'],
    additionalProperties: false,
    errorMessage: { type: form, required: form },
  };
}

/**
 * An aspect as v3 sends it alone: `{"value", "systemMetadata"?, "headers"?}`, `headers` taking
 * `If-Version-Match` and `If-None-Match: *`.
 */
export const ASPECT_BODY = aspectBodyOf(headersSchema({ 'If-Version-Match': IF_VERSION_MATCH, 'If-None-Match': IF_NONE_MATCH }), V3_FORM);

/**
 * An aspect in a batch (v3 and v2): as {@link ASPECT_BODY}, `headers` taking `If-Version-Match` only
 * (a batch always creates or updates, so there is no CREATE for `If-None-Match` to drop).
 */
export const BATCH_ASPECT_BODY = aspectBodyOf(headersSchema({ 'If-Version-Match': IF_VERSION_MATCH }), 'expected {"value": <aspect>, "systemMetadata"?: {...}, "headers"?: {...}}');

const URN_FIELD = { type: 'string', description: 'The entity URN' };

/** The body of a batch POST, per version: entities with their aspects, each wrapped as {@link BATCH_ASPECT_BODY}. */
const BATCH_BODIES: Record<ApiVersion, Record<string, unknown>> = {
  v3: {
    type: 'array',
    items: {
      type: 'object',
      // A v2 body sent to v3 ("aspects" is no aspect's name) is told what v3 expects.
      properties: { urn: URN_FIELD, aspects: { not: {}, errorMessage: '"aspects" is the v2 form: v3 puts each aspect beside "urn", {"urn", "<aspect>": {"value": …}}' } },
      required: ['urn'],
      minProperties: 2,
      additionalProperties: BATCH_ASPECT_BODY,
      errorMessage: { type: 'expected an object with a string "urn"', minProperties: 'no aspects given: expected {"urn", "<aspect>": {"value": …}}' },
    },
    errorMessage: { type: 'Expected a JSON array of v3 entities' },
  },
  v2: {
    type: 'array',
    items: {
      type: 'object',
      properties: { urn: URN_FIELD, aspects: { type: 'object', minProperties: 1, additionalProperties: BATCH_ASPECT_BODY, errorMessage: { minProperties: 'no aspects given' } } },
      required: ['urn', 'aspects'],
      additionalProperties: false,
      errorMessage: { type: 'expected an object {"urn", "aspects": {"<aspect>": {"value": …}}}' },
    },
    errorMessage: { type: 'Expected a JSON array of v2 entities' },
  },
};

const checkAspectBody = compileSchema(ASPECT_BODY, 'body');
const checkBatch = { v2: compileSchema(BATCH_BODIES.v2, 'body'), v3: compileSchema(BATCH_BODIES.v3, 'body') };

/** The conditions of a write as sent in `headers` (see {@link ASPECT_BODY}); undefined when none. */
function conditionsOf(headers: Record<string, string> | undefined): WriteConditions | undefined {
  if (headers === undefined) return undefined;
  const conditions: WriteConditions = {};
  const version = headers['If-Version-Match'];
  if (version !== undefined) conditions.version = Number(version);
  if (headers['If-None-Match'] === '*') conditions.unlessExists = true;
  return conditions;
}

type SentAspect = { value: unknown; systemMetadata?: unknown; headers?: Record<string, string> };

/** An aspect body of a single-aspect POST: v3 wraps it (checked against {@link ASPECT_BODY}); v2 sends the aspect itself. */
export function aspectBody(v: ApiVersion, body: unknown): { value: unknown; systemMetadata?: unknown; conditions?: WriteConditions } {
  if (v === 'v2') return { value: body };
  const problems = checkAspectBody(body);
  if (problems.length) throw SvcError.validation(problems);
  const { value, systemMetadata, headers } = body as SentAspect;
  return { value, systemMetadata, conditions: conditionsOf(headers) };
}

/** The aspects of a batch body, per entity: `[urn, aspect, {value, systemMetadata?, conditions?}]`; VALIDATION listing every problem of its shape. */
export function batchAspects(v: ApiVersion, body: unknown): { urn: string; aspect: string; value: unknown; systemMetadata?: unknown; conditions?: WriteConditions }[] {
  const problems = checkBatch[v](body);
  if (problems.length) throw SvcError.validation(problems);
  return (body as Record<string, unknown>[]).flatMap((item) => {
    const aspects = v === 'v2' ? (item.aspects as Record<string, unknown>) : Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'urn'));
    return Object.entries(aspects).map(([aspect, wrapper]) => {
      const { value, systemMetadata, headers } = wrapper as SentAspect;
      return { urn: item.urn as string, aspect, value, systemMetadata, conditions: conditionsOf(headers) };
    });
  });
}

/**
 * `{"value": …}` plus `systemMetadata` and `auditStamp` when `systemMetadata=true`; `systemMetadata.version`
 * is the aspect's version number as a string (what If-Version-Match takes), when known.
 */
export function aspectWrapper(a: StoredAspect, withSystemMetadata: boolean): Record<string, unknown> {
  if (!withSystemMetadata) return { value: a.value };
  return {
    value: a.value,
    systemMetadata: a.number === undefined ? a.systemMetadata : { ...a.systemMetadata, version: String(a.number) },
    auditStamp: { time: a.createdOn.getTime(), actor: a.createdBy },
  };
}

export function entityShape(v: ApiVersion, e: EntityRecord, withSystemMetadata: boolean): Record<string, unknown> {
  const aspects = Object.fromEntries([...e.aspects.values()].map((a) => [a.aspect, aspectWrapper(a, withSystemMetadata)]));
  return v === 'v3' ? { urn: e.urn, ...aspects } : { urn: e.urn, aspects };
}

