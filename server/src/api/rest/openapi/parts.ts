/** The building blocks the parts of the OpenAPI document share: references, shared responses and parameters, error answers. */
import { REASONS } from '../../../contract/errors.ts';

export type Obj = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
export const json = (schema: Obj) => ({ 'application/json': { schema } });

export const param = (name: string, where: 'path' | 'query', schema: Obj, description: string, required = where === 'path') => ({
  name,
  in: where,
  required,
  description,
  schema,
});

/**
 * Responses and parameters many operations share are components, referred to where used: the
 * document has a path for each aspect of each of DataHub's 72 entity types (about 1,700), and spelled
 * out at each it was 19 MB.
 */
export const RESPONSES: Record<string, Obj> = {
  BadRequest: { description: 'Invalid input: `{"error":"Validation Error","message":…}` or `{"error":"Invalid urn!: …"}`', content: json(ref('Error')) },
  Unauthorized: { description: 'Missing or invalid bearer token', content: json(ref('Error')) },
  Forbidden: { description: 'The token role does not permit this operation: `{"error":"<actor> is unauthorized to <OP> entities.","message":…}`', content: json(ref('Error')) },
  Conflict: {
    description: 'Not written, for now: the write collided with a concurrent one (retry it), or a structured property definition names a qualified name another property holds or that is still being cleaned up after a hard delete',
    content: json(ref('Error')),
  },
  /** A missing entity or aspect: an empty body, and why in a header (DataHub's `ENTITY` for either). */
  NotFound: {
    description: 'Not found: an empty body',
    headers: { 'Not-Found-Reason': { description: 'What is missing: ENTITY for a missing entity or aspect, as DataHub answers both', schema: { enum: ['ENTITY'] } } },
  },
  HeadBadRequest: { description: 'A malformed URN or query parameter' },
  HeadUnauthorized: { description: 'Missing or invalid bearer token' },
  HeadForbidden: { description: 'The token role does not permit reading' },
  PayloadTooLarge: { description: 'The body is larger than SVC_MAX_BODY_BYTES', content: json(ref('Error')) },
  UnsupportedMediaType: { description: 'The body is not sent as application/json', content: json(ref('Error')) },
  CreatePreconditionV3: {
    description:
      'A CREATE precondition failed (the aspect exists and createIfNotExists is true; with the header If-None-Match: * the write is dropped instead, 200), or If-Version-Match does not hold (`{"error":"Validation Error"}`)',
    content: json(ref('Error')),
  },
  CreatePreconditionV2: { description: 'A CREATE precondition failed (the aspect exists and createIfNotExists is true)', content: json(ref('Error')) },
  PatchPrecondition: {
    description: 'A precondition of the write failed: the entity does not exist, a structured property it names does not exist, or If-Version-Match does not hold; nothing is written',
    content: json(ref('Error')),
  },
};
export const response = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` });

export const errors = { '400': response('BadRequest'), '401': response('Unauthorized'), '403': response('Forbidden') };
/** Answers of an operation that writes. */
export const writeErrors = { ...errors, '409': response('Conflict') };
export const notFound = response('NotFound');
/** Answers of a HEAD (no body). */
export const headErrors = { '400': response('HeadBadRequest'), '401': response('HeadUnauthorized'), '403': response('HeadForbidden') };
/** svc's machine-readable kind of a refusal, beside DataHub's fields (contract/errors.ts). */
export const REASON = { type: 'string', enum: Object.keys(REASONS), description: 'What kind of refusal this is, when it is one a client may act on (absent otherwise)' };
/** A failure of a Rest.li call: `{"message", "status"}`, with the header X-RestLi-Error-Response: true. */
export const restliError = (description: string) => ({ description, content: json({ type: 'object', properties: { message: { type: 'string' }, status: { type: 'integer' }, reason: REASON }, required: ['message', 'status'] }) });
export const failures = {
  '400': restliError('A malformed call: {"message", "status"}, with X-RestLi-Error-Response: true'),
  '401': restliError('Missing or invalid bearer token'),
  '403': restliError('A role the call needs'),
};
/** Failures of a Rest.li call with a JSON body. */
export const bodyFailures = { '413': restliError('The body is larger than SVC_MAX_BODY_BYTES (SVC_MAX_INGEST_BODY_BYTES for an ingestProposal or ingestProposalBatch)'), '415': restliError('The body is not sent as application/json') };

/** Answers of an operation that takes a JSON body. */
export const bodyErrors = { '413': response('PayloadTooLarge'), '415': response('UnsupportedMediaType') };

/** Parameters as components (`parameters`, filled as the document is built), referred to by name. */
export function shared(parameters: Obj, prefix: string, list: Obj[]): Obj[] {
  return list.map((p) => {
    const name = `${prefix}.${String(p.name)}`;
    parameters[name] ??= p;
    return { $ref: `#/components/parameters/${name}` };
  });
}
