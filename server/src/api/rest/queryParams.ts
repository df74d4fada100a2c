/** Query-parameter parsing for the REST routes; a malformed value is a 400 saying what was expected. */
import type { Request } from 'express';
import { SvcError } from '../../errors.ts';

// Express 5 parses the query string again on every read of `req.query`: parse it once per request.
const parsed = new WeakMap<Request, Record<string, unknown>>();

function queryOf(req: Request): Record<string, unknown> {
  let q = parsed.get(req);
  if (!q) {
    q = req.query as Record<string, unknown>;
    parsed.set(req, q);
  }
  return q;
}

function raw(req: Request, name: string): string | string[] | undefined {
  const v = queryOf(req)[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw SvcError.validation([`query parameter ${name}: expected a plain value`]);
}

function single(req: Request, name: string): string | undefined {
  const v = raw(req, name);
  if (Array.isArray(v)) throw SvcError.validation([`query parameter ${name}: expected one value, got ${v.length}`]);
  return v;
}

export function boolParam(req: Request, name: string, dflt: boolean): boolean {
  const v = single(req, name);
  if (v === undefined || v === '') return dflt;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw SvcError.validation([`query parameter ${name}: expected true or false, got "${v}"`]);
}

export function intParam(req: Request, name: string, dflt: number, min: number): number {
  const v = single(req, name);
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw SvcError.validation([`query parameter ${name}: expected an integer >= ${min}, got "${v}"`]);
  return n;
}

export function stringParam(req: Request, name: string): string | undefined {
  return single(req, name);
}

/** A repeatable list parameter; also accepts comma-separated values (`aspects=status,datasetKey`). */
export function listParam(req: Request, ...names: string[]): string[] | undefined {
  const values = names.flatMap((n) => {
    const v = raw(req, n);
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  });
  if (values.length === 0) return undefined;
  return values.flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
}

export function enumParam<T extends string>(req: Request, name: string, allowed: readonly T[], dflt: T): T {
  const v = single(req, name);
  if (v === undefined || v === '') return dflt;
  if (!allowed.includes(v as T)) throw SvcError.validation([`query parameter ${name}: expected one of ${allowed.join(', ')}, got "${v}"`]);
  return v as T;
}
