/**
 * The server's side of svc's one error type: {@link SvcError}, its codes and reasons live in the
 * contract (contract/errors.ts), shared with the CLI and the operator; here, what only the server does
 * with them: any throwable made an SvcError, and violations collected across a validation pass.
 */
import { MAX_LISTED_VIOLATIONS, SvcError } from '../contract/errors.ts';

export {
  ERROR_CODES,
  MAX_LISTED_VIOLATIONS,
  MAX_MESSAGE_CHARS,
  MAX_VIOLATION_CHARS,
  REASONS,
  SvcError,
  type ErrorCode,
  type NotFoundReason,
  type Reason,
  type SvcErrorOptions,
} from '../contract/errors.ts';

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
