/**
 * JSON output with DataHub's number rendering: the `double` branch of a typed value always carries a
 * decimal point (`{"double": 60.0}`, never `60`), on every read, because Postgres' jsonb keeps `60.0`
 * as `60` and clients compare the text.
 */
import type { ServerResponse } from 'node:http';
import { doubleText } from '../doubles.ts';

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
  return write(value, undefined) ?? 'null';
}

function write(v: unknown, key: string | undefined): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) return 'null';
      return key === 'double' ? doubleText(v) : String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(v)) return `[${v.map((x) => write(x, undefined) ?? 'null').join(',')}]`;
      const toJSON = (v as { toJSON?: () => unknown }).toJSON;
      if (typeof toJSON === 'function') return write(toJSON.call(v), key);
      const parts: string[] = [];
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const s = write(x, k);
        if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined; // undefined, functions, symbols are left out, as JSON.stringify does
  }
}
