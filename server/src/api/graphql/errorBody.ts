/**
 * An svc failure in GraphQL's error form, from the one error table: `errors[].message` and
 * `errors[].extensions` `{code: <HTTP status>, type: <table's GraphQL code>}` (DataHub's shape, e.g.
 * `{code: 400, type: "BAD_REQUEST"}`), and svc's `reason` when the error has one. Apart from errorMasking.ts, which needs graphql-js: the HTTP
 * app's error handler answers a refused GraphQL request (no token, a body that is not JSON) in this
 * form without loading GraphQL.
 */
import { ERROR_CODES, type SvcError } from '../../shared/errors.ts';

/**
 * The message and `extensions` of an svc failure as a GraphQL error (INTERNAL's cause not shown); the
 * violations as the error lists them (errors.ts bounds them: an upsert naming 10,000 missing
 * properties was answered with 4 MB of them).
 */
export function graphqlErrorParts(svc: SvcError): { message: string; extensions: Record<string, unknown> } {
  const entry = ERROR_CODES[svc.code];
  const extensions: Record<string, unknown> = { code: entry.http, type: entry.graphql };
  if (svc.detail) extensions.detail = svc.detail;
  if (svc.violations.length > 1) extensions.violations = svc.violations;
  if (svc.reason) extensions.reason = svc.reason;
  return { message: svc.code === 'INTERNAL' ? entry.title : svc.message, extensions };
}

/**
 * The whole answer to a GraphQL request refused before GraphQL ran (no token, a body that is not
 * JSON or not a GraphQL request): the same error form as any other, with the table's HTTP status.
 */
export function graphqlErrorBody(svc: SvcError): { errors: { message: string; extensions: Record<string, unknown> }[]; extensions: Record<string, never> } {
  return { errors: [graphqlErrorParts(svc)], extensions: {} };
}

