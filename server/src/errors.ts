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
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SvcError';
    this.code = code;
    this.violations = opts.violations ?? [];
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

  /** A VALIDATION error carrying every violation; the message lists them all, joined by "; ". */
  static validation(violations: string[]): SvcError {
    return new SvcError('VALIDATION', violations.join('; '), { violations });
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
  readonly items: string[] = [];
  add(message: string): void {
    this.items.push(message);
  }
  get empty(): boolean {
    return this.items.length === 0;
  }
  throwIfAny(): void {
    if (this.items.length > 0) throw SvcError.validation(this.items);
  }
}
