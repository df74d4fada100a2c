/**
 * The one error type of svc: a closed set of codes, one table from code to HTTP status and GraphQL
 * `extensions.code`. Every surface (REST, GraphQL, CLI, operator) turns failures into these.
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

/** The most violations one error lists; the rest are counted (an error body stays small whatever was sent). */
export const MAX_LISTED_VIOLATIONS = 20;
/** The longest one violation is shown (a violation quoting a 4 MB value quotes its start). */
export const MAX_VIOLATION_CHARS = 500;
/** The longest message of an error (the violations listed, or a message quoting the input). */
export const MAX_MESSAGE_CHARS = 16 * 1024;

/** Why something was not found, sent as the `Not-Found-Reason` header (DataHub's values). */
/** DataHub's reason header: a missing entity and a missing aspect are both `ENTITY`. */
export type NotFoundReason = 'ENTITY';

export interface SvcErrorOptions {
  cause?: unknown;
  /** Every violation found, for VALIDATION errors; the message joins them. */
  violations?: string[];
  notFoundReason?: NotFoundReason;
  /** For FORBIDDEN: what the operation needs, beside DataHub's one-line `error`. */
  detail?: string;
}

/** A failure with a code from the closed set; `message` is safe to show to the caller (except INTERNAL). */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly violations: string[];
  readonly notFoundReason: NotFoundReason | undefined;
  readonly detail: string | undefined;

  constructor(code: ErrorCode, message: string, opts: SvcErrorOptions = {}) {
    // A message may quote what was sent (a URN of 350 KB, say): it is cut, so an answer stays small.
    super(message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SvcError';
    this.code = code;
    // As many as an error lists (see listing()), whoever made it.
    this.violations = (opts.violations ?? []).slice(0, MAX_LISTED_VIOLATIONS);
    this.notFoundReason = opts.notFoundReason;
    this.detail = opts.detail;
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
  static validation(violations: string[], total = violations.length): SvcError {
    return SvcError.listing('VALIDATION', violations, total);
  }

  /** An error of `code` listing violations, bounded as {@link validation}'s (a 412 naming 10,000 missing properties, say). */
  static listing(code: ErrorCode, violations: string[], total = violations.length): SvcError {
    const listed = violations.slice(0, MAX_LISTED_VIOLATIONS).map((v) => (v.length > MAX_VIOLATION_CHARS ? `${v.slice(0, MAX_VIOLATION_CHARS - 1)}…` : v));
    const more = Math.max(total - listed.length, 0);
    const message = more > 0 ? `${listed.join('; ')}; … and ${more.toLocaleString('en-US')} more problem${more === 1 ? '' : 's'}` : listed.join('; ');
    return new SvcError(code, message, { violations: listed });
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

/** Turns any throwable into an SvcError; unknown ones become INTERNAL with the original as cause. */
export function toSvcError(err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  return new SvcError('INTERNAL', 'Internal server error occurred', { cause: err });
}

/**
 * Collects violations across a validation pass, so a request learns every problem at once.
 * `throwIfAny` raises one VALIDATION error carrying all of them.
 */
export class Violations {
  /** The first violations (as many as an error lists); {@link count} counts them all. */
  readonly items: string[] = [];
  count = 0;
  add(message: string): void {
    if (this.items.length < MAX_LISTED_VIOLATIONS) this.items.push(message);
    this.count++;
  }
  get empty(): boolean {
    return this.count === 0;
  }
  throwIfAny(): void {
    if (this.count > 0) throw SvcError.validation(this.items, this.count);
  }
}
