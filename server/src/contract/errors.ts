/**
 * Failures as they cross a process boundary: the closed set of error codes with their HTTP status and
 * GraphQL `extensions.type`, the closed set of machine-readable `reason`s svc puts in its error bodies
 * (REST `{"error", "message", "reason"}`, Rest.li `{"message", "status", "reason"}`, GraphQL
 * `extensions.reason`), and the one error type that carries both. The server raises these; the CLI
 * and the operator read `reason` (and the status), never the message, to decide what to do.
 */

export const ERROR_CODES = {
  VALIDATION: { http: 400, graphql: 'BAD_REQUEST', title: 'Validation Error' },
  BAD_REQUEST: { http: 400, graphql: 'BAD_REQUEST', title: 'Validation Error' },
  INVALID_URN: { http: 400, graphql: 'BAD_REQUEST', title: 'Invalid urn' },
  UNAUTHORIZED: { http: 401, graphql: 'UNAUTHORIZED', title: 'Unauthorized' },
  // DataHub's GraphQL names a 403 UNAUTHORIZED (DataHubGraphQLErrorCode); a 401 never reaches its GraphQL.
  FORBIDDEN: { http: 403, graphql: 'UNAUTHORIZED', title: 'Forbidden' },
  NOT_FOUND: { http: 404, graphql: 'NOT_FOUND', title: 'Not Found' },
  CONFLICT: { http: 409, graphql: 'CONFLICT', title: 'Conflict' },
  PRECONDITION: { http: 412, graphql: 'PRECONDITION_FAILED', title: 'Precondition Failed' },
  /** A conditional write's If-Version-Match that does not hold: DataHub's later 412 form (`{"error": "Validation Error", …}`). */
  VERSION_MISMATCH: { http: 412, graphql: 'PRECONDITION_FAILED', title: 'Validation Error' },
  REQUEST_TIMEOUT: { http: 408, graphql: 'BAD_REQUEST', title: 'Request Timeout' },
  PAYLOAD_TOO_LARGE: { http: 413, graphql: 'BAD_REQUEST', title: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, graphql: 'BAD_REQUEST', title: 'Unsupported Media Type' },
  UNAVAILABLE: { http: 503, graphql: 'SERVICE_UNAVAILABLE', title: 'Service Unavailable' },
  INTERNAL: { http: 500, graphql: 'SERVER_ERROR', title: 'Internal server error occurred' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Why a request was refused, where the status alone does not say what a client should do. A body
 * without `reason` is a refusal of no particular kind (read its status). The set is closed: a client
 * can list what it handles, and a new reason is a change of this contract.
 */
export const REASONS = {
  /**
   * 400: a structured property definition change that only a greater `version` allows (a value type
   * changed, cardinality from MULTIPLE to SINGLE, allowed values restricted). The operator reports it
   * as `BreakingChangeRejected`, and waits for the spec to change.
   */
  BreakingChange: 'BreakingChange',
  /**
   * 400: a write to a soft-deleted structured property: its definition, or a value of it. Restoring the
   * property (`status.removed: false`) lifts it; the operator restores a property it owns and retries.
   */
  SoftDeleted: 'SoftDeleted',
  /**
   * 409: the values of a hard-deleted structured property of that qualified name (or of the same search
   * field) are still being removed by a task; the name is free again once that task has finished.
   * Retried with backoff by the operator.
   */
  CleanupPending: 'CleanupPending',
  /** 412: a CREATE whose aspect exists already (DataHub: `Cannot perform CREATE since the aspect already exists.`). */
  AspectExists: 'AspectExists',
  /** 412: a CREATE_ENTITY whose entity exists already (DataHub: `Cannot perform CREATE_ENTITY if not exists …`). */
  EntityExists: 'EntityExists',
} as const;

export type Reason = keyof typeof REASONS;

/** Whether `value` is one of the {@link REASONS}. */
export const isReason = (value: unknown): value is Reason => typeof value === 'string' && Object.hasOwn(REASONS, value);

/**
 * An error body as svc sends one: REST's `{"error", "message"}` (DataHub's), Rest.li's
 * `{"message", "status"}`, each with svc's `reason` when the refusal has one.
 */
export interface ErrorBody {
  error?: string;
  message?: string;
  status?: number;
  reason?: Reason;
}

/** The reason of an error body, or undefined (none given, or one this contract does not name). */
export function reasonOf(body: unknown): Reason | undefined {
  const reason = (body as ErrorBody | undefined)?.reason;
  return isReason(reason) ? reason : undefined;
}

/** The most violations one error lists; the rest are counted (an error body stays small whatever was sent). */
export const MAX_LISTED_VIOLATIONS = 20;
/** The longest one violation is shown (a violation quoting a 4 MB value quotes its start). */
export const MAX_VIOLATION_CHARS = 500;
/** The longest message of an error (the violations listed, or a message quoting the input). */
export const MAX_MESSAGE_CHARS = 16 * 1024;

/** DataHub's reason header (`Not-Found-Reason`): a missing entity and a missing aspect are both `ENTITY`. */
export type NotFoundReason = 'ENTITY';

export interface SvcErrorOptions {
  cause?: unknown;
  /** Every violation found, for VALIDATION errors; the message joins them. */
  violations?: string[];
  notFoundReason?: NotFoundReason;
  /** For FORBIDDEN: what the operation needs, beside DataHub's one-line `error`. */
  detail?: string;
  /** What kind of refusal this is, for a client to act on (see {@link REASONS}). */
  reason?: Reason;
}

/** A failure with a code from the closed set; `message` is safe to show to the caller (except INTERNAL). */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly violations: string[];
  readonly notFoundReason: NotFoundReason | undefined;
  readonly detail: string | undefined;
  readonly reason: Reason | undefined;

  constructor(code: ErrorCode, message: string, opts: SvcErrorOptions = {}) {
    // A message may quote what was sent (a URN of 350 KB, say): it is cut, so an answer stays small.
    super(message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SvcError';
    this.code = code;
    // As many as an error lists (see listing()), whoever made it.
    this.violations = (opts.violations ?? []).slice(0, MAX_LISTED_VIOLATIONS);
    this.notFoundReason = opts.notFoundReason;
    this.detail = opts.detail;
    this.reason = opts.reason;
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  /** The short title DataHub puts in `error`, e.g. `Validation Error`. */
  get title(): string {
    return ERROR_CODES[this.code].title;
  }

  /**
   * A VALIDATION error carrying the violations found; the message lists them, joined by "; ". However
   * many a request has (a body of 500,000 unknown fields has as many), the error holds the first
   * {@link MAX_LISTED_VIOLATIONS}, each cut at {@link MAX_VIOLATION_CHARS}, and says how many more
   * there were: `a; b; … and 499,980 more problems`.
   */
  static validation(violations: string[], total = violations.length, reason?: Reason): SvcError {
    return SvcError.listing('VALIDATION', violations, total, reason);
  }

  /** An error of `code` listing violations, bounded as {@link validation}'s (a 412 naming 10,000 missing properties, say). */
  static listing(code: ErrorCode, violations: string[], total = violations.length, reason?: Reason): SvcError {
    const listed = violations.slice(0, MAX_LISTED_VIOLATIONS).map((v) => (v.length > MAX_VIOLATION_CHARS ? `${v.slice(0, MAX_VIOLATION_CHARS - 1)}…` : v));
    const more = Math.max(total - listed.length, 0);
    const message = more > 0 ? `${listed.join('; ')}; … and ${more.toLocaleString('en-US')} more problem${more === 1 ? '' : 's'}` : listed.join('; ');
    return new SvcError(code, message, { violations: listed, reason });
  }

  static invalidUrn(urn: string, cause?: unknown): SvcError {
    return new SvcError('INVALID_URN', `Invalid urn!: ${urn}`, { cause });
  }

  /**
   * A caller whose role does not permit the operation: `line` is DataHub's form
   * (`<actor> is unauthorized to UPDATE entities.`), `detail` says what is needed.
   */
  static forbidden(line: string, detail: string): SvcError {
    return new SvcError('FORBIDDEN', line, { detail });
  }

  /** Something missing: an entity or aspect (with its reason: an empty 404, as DataHub) or anything else (a message). */
  static notFound(message: string, reason?: NotFoundReason): SvcError {
    return new SvcError('NOT_FOUND', message, { notFoundReason: reason });
  }
}
