/**
 * URNs: `urn:li:<entityType>:<id>`, where the id is either plain (`io.acryl.privacy.retentionTime`)
 * or a tuple in parentheses whose parts may be URNs themselves:
 * `urn:li:dataset:(urn:li:dataPlatform:hive,db.table,PROD)`.
 */
import { SvcError } from './errors.ts';

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
/** Control characters (C0 and DEL): never part of an identifier. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The longest URN, in bytes once URL-encoded (as a URL path or form encodes it: a byte outside
 * `A-Za-z0-9.*_-` takes three), as DataHub limits it: every URN svc stores can be addressed in a URL.
 * A schemaField URN nests its dataset's whole URN, so it may be longer.
 */
export const MAX_URN_BYTES = 512;
export const MAX_SCHEMA_FIELD_URN_BYTES = 2048;

function fail(raw: string, why: string): never {
  throw SvcError.invalidUrn(raw, new Error(why));
}

/** The length of `raw` URL-encoded, in bytes. */
export function urlEncodedLength(raw: string): number {
  let n = 0;
  for (const b of Buffer.from(raw, 'utf8')) {
    const plain = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2e || b === 0x2a || b === 0x5f || b === 0x2d;
    n += plain ? 1 : 3;
  }
  return n;
}

function checkLength(raw: string, entityType: string): void {
  const max = entityType === 'schemaField' ? MAX_SCHEMA_FIELD_URN_BYTES : MAX_URN_BYTES;
  // An ASCII character takes at most 3 bytes encoded: most URNs are short enough not to be counted.
  if (raw.length * 3 <= max && /^[\x20-\x7e]*$/.test(raw)) return;
  const length = urlEncodedLength(raw);
  if (length > max) {
    throw SvcError.validation([
      `Error: cannot provide an URN longer than ${max} bytes (when URL encoded): this one is ${length} bytes: ${raw.slice(0, 80)}…`,
    ]);
  }
}

/**
 * Parses a URN; throws INVALID_URN (`Invalid urn!: <urn>`) when it is not well formed, and VALIDATION
 * when it is longer than {@link MAX_URN_BYTES}.
 */
export function parseUrn(raw: string): Urn {
  if (typeof raw !== 'string' || !raw.startsWith(PREFIX)) fail(raw, 'must start with urn:li:');
  if (CONTROL.test(raw) || !raw.isWellFormed()) fail(raw, 'control characters or invalid Unicode');
  if (raw.trim() !== raw) fail(raw, 'leading or trailing whitespace');
  const rest = raw.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) fail(raw, 'missing entity type');
  const entityType = rest.slice(0, colon);
  if (!ENTITY_TYPE.test(entityType)) fail(raw, 'bad entity type');
  const id = rest.slice(colon + 1);
  if (id.length === 0) fail(raw, 'empty id');
  checkLength(raw, entityType);
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
