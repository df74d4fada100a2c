/**
 * URNs: `urn:li:<entityType>:<id>`, where the id is either plain (`io.acryl.privacy.retentionTime`)
 * or a tuple in parentheses whose parts may be URNs themselves:
 * `urn:li:dataset:(urn:li:dataPlatform:hive,db.table,PROD)`.
 */
import { SvcError } from '../errors.ts';

export interface Urn {
  /** The entity type as written in the URN, e.g. `dataset`. */
  entityType: string;
  /** Everything after the entity type, e.g. `(urn:li:dataPlatform:hive,db.table,PROD)`. */
  id: string;
  /** The tuple parts for a tuple id, else the id as its only part. */
  parts: string[];
}

const PREFIX = 'urn:li:';
const ENTITY_TYPE = /^[A-Za-z][A-Za-z0-9_]*$/;

function fail(raw: string, why: string): never {
  throw SvcError.invalidUrn(raw, new Error(why));
}

/** Parses a URN; throws INVALID_URN (`Invalid urn!: <urn>`) when it is not well formed. */
export function parseUrn(raw: string): Urn {
  if (typeof raw !== 'string' || !raw.startsWith(PREFIX)) fail(raw, 'must start with urn:li:');
  const rest = raw.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) fail(raw, 'missing entity type');
  const entityType = rest.slice(0, colon);
  if (!ENTITY_TYPE.test(entityType)) fail(raw, 'bad entity type');
  const id = rest.slice(colon + 1);
  if (id.length === 0) fail(raw, 'empty id');
  if (/[\r\n\t]/.test(id)) fail(raw, 'control characters in id');
  let parts: string[] = [id];
  if (id.startsWith('(')) {
    if (!id.endsWith(')')) fail(raw, 'unterminated tuple');
    const split = splitTuple(id.slice(1, -1));
    if (split === undefined) fail(raw, 'unbalanced parentheses');
    parts = split;
    if (parts.some((p) => p.length === 0)) fail(raw, 'empty tuple part');
  } else if (!balanced(id)) {
    fail(raw, 'unbalanced parentheses');
  }
  return { entityType, id, parts };
}

/** Splits the inside of a tuple at top-level commas; undefined when parentheses do not balance. */
function splitTuple(inner: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth < 0) return undefined;
    } else if (c === ',' && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) return undefined;
  parts.push(inner.slice(start));
  return parts;
}

function balanced(s: string): boolean {
  let depth = 0;
  for (const c of s) {
    if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

/** Formats a URN from an entity type and either a plain id or tuple parts. */
export function formatUrn(entityType: string, idOrParts: string | string[]): string {
  const id = Array.isArray(idOrParts) ? `(${idOrParts.join(',')})` : idOrParts;
  return `${PREFIX}${entityType}:${id}`;
}

/** True when `raw` parses as a URN. */
export function isUrn(raw: unknown): raw is string {
  if (typeof raw !== 'string') return false;
  try {
    parseUrn(raw);
    return true;
  } catch {
    return false;
  }
}
