/**
 * The two OpenAPI families' JSON shapes. v3: aspects beside `urn`, each `{"value": …}`; v2: aspects
 * nested under `"aspects"`. System metadata and audit stamps appear only when asked for.
 */
import { SvcError } from '../../errors.ts';
import type { EntityRecord, StoredAspect } from '../../entities/entityService.ts';
import { compileSchema } from '../../validation.ts';

export type ApiVersion = 'v2' | 'v3';

const V3_FORM = 'the v3 request body must be {"value": <aspect>, "systemMetadata"?: {...}}';

/** An aspect as v3 sends it, alone or in a batch (and v2 in a batch): `{"value", "systemMetadata"?, "headers"?}`. */
export const ASPECT_BODY = {
  type: 'object',
  properties: {
    value: { description: 'The aspect' },
    systemMetadata: { type: 'object', description: 'Kept with the aspect (runId, properties, …); lastObserved is set by the server' },
    headers: { type: 'object', description: 'Conditional-write headers (If-Version-Match): taken, not acted upon yet' },
  },
  required: ['value'],
  additionalProperties: false,
  errorMessage: { type: V3_FORM, required: V3_FORM },
};

const URN_FIELD = { type: 'string', description: 'The entity URN' };

/** The body of a batch POST, per version: entities with their aspects, each wrapped as {@link ASPECT_BODY}. */
const BATCH_BODIES: Record<ApiVersion, Record<string, unknown>> = {
  v3: {
    type: 'array',
    items: {
      type: 'object',
      properties: { urn: URN_FIELD },
      required: ['urn'],
      minProperties: 2,
      additionalProperties: ASPECT_BODY,
      errorMessage: { type: 'expected an object with a string "urn"', minProperties: 'no aspects given: expected {"urn", "<aspect>": {"value": …}}' },
    },
    errorMessage: { type: 'Expected a JSON array of v3 entities' },
  },
  v2: {
    type: 'array',
    items: {
      type: 'object',
      properties: { urn: URN_FIELD, aspects: { type: 'object', minProperties: 1, additionalProperties: ASPECT_BODY, errorMessage: { minProperties: 'no aspects given' } } },
      required: ['urn', 'aspects'],
      additionalProperties: false,
      errorMessage: { type: 'expected an object {"urn", "aspects": {"<aspect>": {"value": …}}}' },
    },
    errorMessage: { type: 'Expected a JSON array of v2 entities' },
  },
};

const checkAspectBody = compileSchema(ASPECT_BODY, 'body');
const checkBatch = { v2: compileSchema(BATCH_BODIES.v2, 'body'), v3: compileSchema(BATCH_BODIES.v3, 'body') };

/** An aspect body of a single-aspect POST: v3 wraps it (checked against {@link ASPECT_BODY}); v2 sends the aspect itself. */
export function aspectBody(v: ApiVersion, body: unknown, aspect: string): { value: unknown; systemMetadata?: unknown } {
  if (v === 'v2') return { value: body };
  const problems = checkAspectBody(body, aspect);
  if (problems.length) throw SvcError.validation(problems);
  const { value, systemMetadata } = body as { value: unknown; systemMetadata?: unknown };
  return { value, systemMetadata };
}

/** The aspects of a batch body, per entity: `[urn, aspect, {value, systemMetadata?}]`; VALIDATION listing every problem of its shape. */
export function batchAspects(v: ApiVersion, body: unknown): { urn: string; aspect: string; value: unknown; systemMetadata?: unknown }[] {
  const problems = checkBatch[v](body);
  if (problems.length) throw SvcError.validation(problems);
  return (body as Record<string, unknown>[]).flatMap((item) => {
    const aspects = v === 'v2' ? (item.aspects as Record<string, unknown>) : Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'urn'));
    return Object.entries(aspects).map(([aspect, wrapper]) => {
      const { value, systemMetadata } = wrapper as { value: unknown; systemMetadata?: unknown };
      return { urn: item.urn as string, aspect, value, systemMetadata };
    });
  });
}

/** `{"value": …}` plus `systemMetadata` and `auditStamp` when `systemMetadata=true`. */
export function aspectWrapper(a: StoredAspect, withSystemMetadata: boolean): Record<string, unknown> {
  if (!withSystemMetadata) return { value: a.value };
  return {
    value: a.value,
    systemMetadata: a.systemMetadata,
    auditStamp: { time: a.createdOn.getTime(), actor: a.createdBy },
  };
}

export function entityShape(v: ApiVersion, e: EntityRecord, withSystemMetadata: boolean): Record<string, unknown> {
  const aspects = Object.fromEntries([...e.aspects.values()].map((a) => [a.aspect, aspectWrapper(a, withSystemMetadata)]));
  return v === 'v3' ? { urn: e.urn, ...aspects } : { urn: e.urn, aspects };
}

