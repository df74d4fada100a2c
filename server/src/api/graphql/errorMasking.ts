/**
 * Errors over GraphQL, from the one error table: HTTP 200 with `errors[].message` and
 * `errors[].extensions` in the form of errorBody.ts. A fault of svc's own is masked as `Internal server error
 * occurred`, its cause only in the log. GraphQL's own errors (parse, validation, variables) pass as
 * GraphQL reports them.
 */
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ERROR_CODES, toSvcError, type SvcError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { stringifyJsonWithDoublesAt, type DoublePlaces } from '../json.ts';
import { graphqlErrorParts } from './errorBody.ts';
import { floatPaths } from './floatPaths.ts';

/** Where a result's Floats are (see floatPaths.ts), put on the result as its execution ends. */
const FLOATS = Symbol('float paths');
const NO_FLOATS: DoublePlaces = { paths: new Set() };

/** graphql-js' bare words when it stops validating a document whose fields it would have to compare pair by pair (its work budget spent). */
const VALIDATION_ABORTED = 'Validation aborted.';

/** {@link VALIDATION_ABORTED} in words a caller can act on. */
export function useReadableValidationAbort(): Plugin {
  return {
    onValidate() {
      return ({ result, setResult }) => {
        if (!result.some((e) => e.message === VALIDATION_ABORTED)) return;
        setResult(
          result.map((e) =>
            e.message === VALIDATION_ABORTED ? new GraphQLError(`${VALIDATION_ABORTED} The document repeats fields so often that checking which of them merge is too much work: select each field once`, { nodes: e.nodes, extensions: e.extensions }) : e,
          ),
        );
      };
    },
  };
}

/**
 * Yoga's refusals of a request as a whole (a batch, a parameter of the wrong type, a mutation sent by
 * GET: an HTTP status in `extensions.http`) in svc's error form, keeping that status and its headers;
 * an operation that cannot be resolved (no operation of that name, several without a name) is
 * GraphQL's own error, answered as a document that does not validate (HTTP 200 as `application/json`).
 */
function requestRefusal(error: GraphQLError): GraphQLError {
  const http = error.extensions.http as { status?: number; spec?: boolean } | undefined;
  if (typeof http?.status !== 'number' || http.spec) return error;
  const located = { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path };
  if (error.extensions.code === 'OPERATION_RESOLUTION_FAILURE') {
    return new GraphQLError(error.message, { ...located, extensions: { code: error.extensions.code, http: { spec: true, status: 400 } } });
  }
  const entry = Object.values(ERROR_CODES).find((e) => e.http === http.status) ?? ERROR_CODES.BAD_REQUEST;
  return new GraphQLError(error.message, { ...located, extensions: { code: http.status, type: entry.graphql, http } });
}

export function maskError(log: Logger) {
  return (error: unknown): Error => {
    const original = error instanceof GraphQLError ? error.originalError : error;
    // GraphQL's own errors (no cause, or a GraphQLError as cause) are already what the caller should see.
    if (error instanceof GraphQLError && (original === undefined || original === null || original instanceof GraphQLError)) return requestRefusal(error);
    const svc = toSvcError(original);
    if (svc.code === 'INTERNAL' || svc.code === 'UNAVAILABLE') log.error({ err: svc.cause ?? svc, path: (error as GraphQLError).path }, 'graphql request failed');
    const { message, extensions } = graphqlErrorParts(svc);
    const located = error instanceof GraphQLError ? error : undefined;
    const masked = new GraphQLError(message, { nodes: located?.nodes, source: located?.source, positions: located?.positions, path: located?.path, extensions });
    // graphql-jit's errors have their locations but not the nodes they were computed from.
    if (masked.locations === undefined && located?.locations?.length) Object.assign(masked, { locations: located.locations });
    return masked;
  };
}

type Result = Parameters<NonNullable<Plugin['onResultProcess']>>[0]['result'];

type Located = { message: string; locations?: readonly unknown[]; path?: unknown; extensions?: unknown; toJSON?(): object };

/**
 * The errors as serialised, each with the locations of the error it was made from: yoga makes each
 * error again before it serialises it, from its nodes, and graphql-jit's errors have their locations
 * but no nodes, so errors raised in resolvers would lose where in the query they are.
 */
function withLocations(errors: readonly Located[], originals: readonly Located[] | undefined): unknown[] {
  return errors.map((e, i) => {
    const locations = originals?.[i]?.locations;
    if (e.locations?.length || !locations?.length) return e;
    const { message, path, extensions } = (e.toJSON?.() ?? e) as Located;
    return { message, locations, ...(path === undefined ? {} : { path }), ...(extensions === undefined ? {} : { extensions }) };
  });
}

/**
 * Every response carries an `extensions` object, as DataHub's do: a result's serialiser adds it
 * (yoga drops an empty `extensions` from a result with errors as it serialises, so it is added there),
 * keeps each error's locations (see {@link withLocations}) and writes Floats as doubles (`30.0`, see
 * floatPaths.ts).
 */
export function withExtensionsObject(result: Result): void {
  for (const r of Array.isArray(result) ? result : [result]) {
    if (!r || typeof r !== 'object' || Symbol.asyncIterator in r) continue;
    const originals = r.errors as readonly Located[] | undefined;
    const floats = (r as { [FLOATS]?: DoublePlaces })[FLOATS] ?? NO_FLOATS;
    r.stringify = (x) => stringifyJsonWithDoublesAt({ ...x, ...(x.errors ? { errors: withLocations(x.errors, originals) } : {}), extensions: x.extensions ?? {} }, floats);
  }
}

/** {@link withExtensionsObject} on every result yoga serialises, with where the executed operation's Floats are. */
export function useExtensionsObject(): Plugin {
  return {
    onExecute({ args }) {
      const floats = floatPaths(args.schema, args.document, args.operationName);
      if (floats.paths.size === 0) return undefined;
      return {
        onExecuteDone({ result }) {
          if (result && typeof result === 'object' && !(Symbol.asyncIterator in result)) Object.assign(result, { [FLOATS]: floats });
        },
      };
    },
    onResultProcess({ result }) {
      withExtensionsObject(result);
    },
  };
}
