/**
 * The parameters of an operations action (DataHub's Rest.li actions take a JSON object of named
 * parameters), read with one rule: every missing, mistyped or unknown parameter is named, all at once,
 * so a misspelt or mistyped one never silently falls back to its default. A JSON `null` counts as absent.
 *
 *   readParameters('getEsTaskStatus', { task: { kind: 'string' } }, { task: 123 })
 *   // → VALIDATION "Parameter 'task' must be a string (not empty), got 123"
 */
import { SvcError } from '../shared/errors.ts';

type Kind = 'string' | 'long' | 'int' | 'time' | 'boolean';

/**
 * One parameter: its type (`long` and `int` as Java's: an `int` is 32 bits, a `long` within what JSON
 * numbers hold exactly; a `time` is a Java `long` of epoch milliseconds, see {@link timeOf}), whether
 * it must be given, and (for a number) the least value it takes.
 */
export interface ParameterSpec {
  kind: Kind;
  required?: boolean;
  minimum?: number;
}

const EXPECTED: Record<Kind, string> = { string: 'a string (not empty)', long: 'an integer', int: 'an integer from -2147483648 to 2147483647', time: 'an integer of epoch milliseconds (a long)', boolean: 'true or false' };

const INT_MAX = 2 ** 31 - 1;
/** A Java long's bounds, as doubles (2^63: `Long.MAX_VALUE` written as a decimal rounds to it). */
const LONG_BOUND = 2 ** 63;

/**
 * Epoch milliseconds given as a Java `long`: an integer, also one beyond ±2^53 written as a decimal
 * (the JSON body's rule for such integers, see inputRules.ts: `Long.MAX_VALUE`, "every entry", is
 * `9.223372036854776e18`), within a long's range. Beyond ±2^53 it is taken as ±(2^53 − 1): no time
 * svc stores lies further out, so what such a time selects is the same.
 */
function timeOf(v: unknown): number | undefined {
  if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) > LONG_BOUND) return undefined;
  return Math.max(Math.min(v, Number.MAX_SAFE_INTEGER), -Number.MAX_SAFE_INTEGER);
}

/** The value a parameter of `kind` takes from `v`; undefined when `v` is not one. */
function valueOf(kind: Kind, v: unknown): unknown {
  switch (kind) {
    case 'string':
      return typeof v === 'string' && v !== '' ? v : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? v : undefined;
    case 'long':
      return Number.isSafeInteger(v) ? v : undefined;
    case 'int':
      return Number.isSafeInteger(v) && (v as number) >= -INT_MAX - 1 && (v as number) <= INT_MAX ? v : undefined;
    case 'time':
      return timeOf(v);
  }
}

/** The given parameters of `body` (absent ones left out); VALIDATION listing every problem. */
export function readParameters(action: string, specs: Record<string, ParameterSpec>, body: unknown): Record<string, unknown> {
  const names = Object.keys(specs);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw SvcError.validation([`The body must be a JSON object of the parameters of ${action} (${names.length ? names.join(', ') : 'none: {}'})`]);
  }
  const given = body as Record<string, unknown>;
  const problems: string[] = [];
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(specs, name)) problems.push(`Parameter '${name}' is not a parameter of ${action} (${names.length ? `they are ${names.join(', ')}` : 'it takes none'})`);
  }
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(specs)) {
    const v = given[name];
    if (v === undefined || v === null) {
      if (p.required) problems.push(`Parameter '${name}' is required`);
      continue;
    }
    const value = valueOf(p.kind, v);
    if (value === undefined) problems.push(`Parameter '${name}' must be ${EXPECTED[p.kind]}, got ${JSON.stringify(v)}`);
    else if (p.minimum !== undefined && (value as number) < p.minimum) problems.push(`Parameter '${name}' must be an integer of at least ${p.minimum}, got ${JSON.stringify(v)}`);
    else out[name] = value;
  }
  if (problems.length) throw SvcError.validation(problems);
  return out;
}
