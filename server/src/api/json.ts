/**
 * JSON output with DataHub's number rendering: the `double` branch of a typed value always carries a
 * decimal point (`{"double": 60.0}`, never `60`), on every read, because Postgres' jsonb keeps `60.0`
 * as `60` and clients compare the text.
 */
import type { ServerResponse } from 'node:http';
import { doubleText } from '../contract/doubles.ts';

/**
 * Writes `body` as the JSON response with `status`, directly: Express' `res.send` machinery costs
 * more than the rest of a small write. Headers set before (e.g. `Not-Found-Reason`) are kept.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = stringifyJson(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Serialises `value` like JSON.stringify, writing numbers under a `double` key with a decimal point (see doubles.ts). */
export function stringifyJson(value: unknown): string {
  // Most responses have no `double` key at all: the native serialiser writes them, the same text.
  // (A string containing "double": is written escaped, \"double\":, so it does not match.)
  const plain = JSON.stringify(value) as string | undefined;
  if (plain === undefined) return 'null';
  if (!plain.includes('"double":')) return plain;
  // The numbers under the key are rewritten in that text, unless one may be -0 (written 0 there) or
  // a list is under the key (each of its numbers is a double): then the value is written anew.
  if (!MAY_NEED_WALK.test(plain)) return plain.replace(DOUBLE_NUMBER, (_m, n: string) => `"double":${doubleText(Number(n))}`);
  return write(value, undefined, '', TYPED_VALUES) ?? 'null';
}

/** A number under a `double` key in JSON text (a quote inside a string is escaped, so this is a key). */
const DOUBLE_NUMBER = /"double":(-?[0-9][0-9.eE+-]*)/g;
/** A `double` key whose number may be -0, or that holds a list. */
const MAY_NEED_WALK = /"double":(?:0(?![0-9.eE])|\[)/;

/** Where a GraphQL answer's Floats are (see api/graphql/floatPaths.ts). */
export interface DoublePlaces {
  /**
   * Response paths from the root, keys joined by `.`, array indices left out
   * (`data.dataset.structuredProperties.properties.values.numberValue`).
   */
  paths: ReadonlySet<string>;
  /** The last key of each path, when no other field of the answer has one of them: then the keys alone say where. */
  keys?: ReadonlySet<string>;
}

/**
 * Serialises `value` like JSON.stringify, writing the numbers at the given places as doubles (see
 * doubles.ts): GraphQL's Float fields.
 */
export function stringifyJsonWithDoublesAt(value: unknown, places: DoublePlaces): string {
  if (places.paths.size === 0) return JSON.stringify(value) ?? 'null';
  if (!places.keys) return write(value, undefined, '', (_key, path) => places.paths.has(path)) ?? 'null';
  // The keys are the Floats' alone: the native serialiser's text, with each number under one of them
  // rewritten (an escaped quote, \", is inside a string, not a key).
  let out = JSON.stringify(value) ?? 'null';
  for (const key of places.keys) out = out.replace(numberUnder(key), (_m, n: string) => `"${key}":${doubleText(Number(n))}`);
  return out;
}

const numbersUnder = new Map<string, RegExp>();
/** A number under `key` in JSON text (a GraphQL response key: a name, no character to escape). */
function numberUnder(key: string): RegExp {
  let re = numbersUnder.get(key);
  // Keys are the callers' aliases too: the cache is kept small.
  if (!re && numbersUnder.size >= 256) numbersUnder.clear();
  if (!re) numbersUnder.set(key, (re = new RegExp(`(?<!\\\\)"${key}":(-?[0-9][0-9.eE+-]*)`, 'g')));
  return re;
}

/** Whether the number under `key` (at `path`) is a double. */
type IsDouble = (key: string | undefined, path: string) => boolean;

/** The typed values of aspects: `{"double": 60.0}`. */
const TYPED_VALUES: IsDouble = (key) => key === 'double';

function write(v: unknown, key: string | undefined, path: string, isDouble: IsDouble): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) return 'null';
      return isDouble(key, path) ? doubleText(v) : String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(v)) return `[${v.map((x) => write(x, key, path, isDouble) ?? 'null').join(',')}]`;
      const toJSON = (v as { toJSON?: () => unknown }).toJSON;
      if (typeof toJSON === 'function') return write(toJSON.call(v), key, path, isDouble);
      const parts: string[] = [];
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const s = write(x, k, path === '' ? k : `${path}.${k}`, isDouble);
        if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined; // undefined, functions, symbols are left out, as JSON.stringify does
  }
}
