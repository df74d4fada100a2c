/**
 * What any input of svc may hold, checked once where it enters (request bodies, path segments, query
 * parameters), so nothing the store cannot keep faithfully ever reaches it:
 *
 * - a string holds valid Unicode without U+0000: Postgres text and jsonb cannot store U+0000, and a
 *   lone surrogate (`"\ud800"`) is not a character at all;
 * - a number is finite, and an integer written without a fraction or exponent is exact: beyond
 *   ±(2^53 − 1) a JavaScript number rounds it (`9007199254740993` would be stored as `…992`);
 * - JSON nests at most {@link MAX_JSON_DEPTH} levels;
 * - no field is named `__proto__` ({@link PROTOTYPE_KEY}).
 */
import { getUnsafeNumberReason, parse as parseLossless } from 'lossless-json';

/** Deepest nesting of objects and arrays a JSON body may have (aspects nest fewer than 10 levels). */
export const MAX_JSON_DEPTH = 64;

/**
 * A field name no input may have: JavaScript reads `__proto__` as an object's prototype, so a copy of
 * an object holding it (`out[key] = value`) takes the value as its prototype instead of a field.
 */
export const PROTOTYPE_KEY = '__proto__';

/** Why `s` cannot be stored, or undefined when it can. */
export function stringProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains the NUL character (U+0000), which svc does not store';
  if (!s.isWellFormed()) return 'contains a lone UTF-16 surrogate, which is not valid Unicode';
  return undefined;
}

/** Problems are reported with the JSON path where they are, at most this many. */
const MAX_REPORTED = 20;

/**
 * Every reason the parsed JSON `value` (from the text `raw`) cannot be accepted, each naming where it
 * is (`body.value.description: contains the NUL character …`); empty when it can.
 */
export function jsonProblems(value: unknown, raw: string): string[] {
  const out: string[] = [];
  // Most bodies are fine: they are checked without building paths, and walked again only if not.
  if (!acceptable(value, 0)) walk(value, 'body', 0, out);
  // A run of 16 digits is needed to write an integer beyond 2^53; only then is the text read again
  // with the numbers kept as written.
  if (/\d{16}/.test(raw)) inexactIntegers(raw, out);
  return out.slice(0, MAX_REPORTED);
}

/** Whether {@link walk} would find nothing, without building the paths. */
function acceptable(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
      return !v.includes('\u0000') && v.isWellFormed();
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null) return true;
      if (depth >= MAX_JSON_DEPTH) return false;
      if (Array.isArray(v)) {
        for (const x of v) if (!acceptable(x, depth + 1)) return false;
        return true;
      }
      for (const k in v) {
        if (k === PROTOTYPE_KEY || !acceptable(k, depth) || !acceptable((v as Record<string, unknown>)[k], depth + 1)) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

/** A JSON path as shown in a message: a deep or long one is cut in the middle. */
function shown(path: string): string {
  return path.length > 100 ? `${path.slice(0, 60)}…${path.slice(-30)}` : path;
}

function walk(v: unknown, path: string, depth: number, out: string[]): void {
  if (out.length >= MAX_REPORTED) return;
  switch (typeof v) {
    case 'string': {
      const problem = stringProblem(v);
      if (problem) out.push(`${shown(path)}: the string ${problem}`);
      return;
    }
    case 'number':
      // JSON.parse reads 1e400 as Infinity, which JSON cannot write back.
      if (!Number.isFinite(v)) out.push(`${shown(path)}: the number is out of range (at most about 1.8e308)`);
      return;
    case 'object': {
      if (v === null) return;
      if (depth >= MAX_JSON_DEPTH) {
        out.push(`${shown(path)}: nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`);
        return;
      }
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) walk(v[i], `${path}[${i}]`, depth + 1, out);
        return;
      }
      for (const [k, x] of Object.entries(v)) {
        const problem = k === PROTOTYPE_KEY ? 'is __proto__, which names the prototype of an object in JavaScript (no aspect or parameter has a field so named)' : stringProblem(k);
        if (problem) out.push(`${shown(path)}: a field name ${problem}`);
        walk(x, `${path}.${k}`, depth + 1, out);
      }
      return;
    }
    default:
      return;
  }
}

/**
 * Why the number written as `text` (JSON's or GraphQL's syntax) cannot be stored as written, or
 * undefined when it can: out of range, or an integer a JavaScript number would round.
 */
export function numberTextProblem(text: string): string | undefined {
  if (!Number.isFinite(Number(text))) return 'the number is out of range (at most about 1.8e308)';
  if (getUnsafeNumberReason(text) === 'truncate_integer') {
    return `the integer ${text} is beyond ±9007199254740991 and cannot be kept exactly; send it as a string, or as a decimal (${Number(text).toExponential()}) if rounding is acceptable`;
  }
  return undefined;
}

/**
 * Adds to `out` the integers of a JSON text that a JavaScript number would round, as messages, until
 * `out` holds {@link MAX_REPORTED}: a body of a million such integers costs one pass, not a million
 * messages.
 */
function inexactIntegers(raw: string, out: string[]): void {
  try {
    parseLossless(raw, null, (text: string) => {
      // Numbers out of range are reported where they are by walk(): JSON.parse made them Infinity.
      if (out.length < MAX_REPORTED && Number.isFinite(Number(text)) && getUnsafeNumberReason(text) === 'truncate_integer') out.push(`body: ${numberTextProblem(text)}`);
      return 0;
    });
  } catch {
    // lossless-json refuses some texts JSON.parse takes (a key repeated with another value), and
    // its parser recurses (a text nested thousands deep overflows it: walk() reported that depth
    // already); the numbers found before that are still reported.
  }
}
