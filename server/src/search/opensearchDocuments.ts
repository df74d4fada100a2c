/**
 * What svc stores in OpenSearch and how the indices map it: a document's `_id` (its URN, or the URN's
 * hash when the URN is longer than an id may be), its source (with the hashes of keyword values longer
 * than a term may be, issue 48), and the mapping of the fields an index holds (number → `double`,
 * date → `date`, string/urn/rich_text → `keyword`). The backend (opensearchBackend.ts) sends them; the
 * time series indices share the keyword limit.
 */
import { createHash } from 'node:crypto';
import type { SearchDocument } from './backend.ts';
import { documentSource, type FieldSpec, type FieldType } from './fields.ts';

/**
 * A keyword value longer than this many characters (UTF-16 code units, as OpenSearch counts them) is
 * kept in the document but not indexed under its field (`ignore_above`): Lucene refuses a term over
 * 32,766 UTF-8 bytes, and OpenSearch would refuse the whole document with it. 8,191 code units are at
 * most 24,573 bytes. Such a value is indexed as its hash instead ({@link LONG_VALUES_FIELD}).
 */
export const MAX_INDEXED_KEYWORD = 8191;

/**
 * A field of every index holding, for each keyword value longer than {@link MAX_INDEXED_KEYWORD}, the
 * term `<field>=<SHA-256 of the value, hex>`: such a value is found by exact match and by `exists`
 * through it. Ranges, wildcards and facets do not see it (they would need the value's terms); the
 * `postgres` backend has no such limit.
 */
export const LONG_VALUES_FIELD = 'svcLongValues';

/** OpenSearch's longest document id, in UTF-8 bytes. */
const MAX_ID_BYTES = 512;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The term a long keyword value is indexed by, under {@link LONG_VALUES_FIELD}. */
export const longValueTerm = (field: string, value: string) => `${field}=${sha256(value)}`;

/**
 * A document's `_id`: its URN, or `sha256:<hash of the URN>` for a URN longer than an id may be
 * (schemaField URNs reach 2,048 bytes). Searches read URNs from the `urn` field, never from the id.
 */
export function documentId(urn: string): string {
  return Buffer.byteLength(urn) <= MAX_ID_BYTES ? urn : `sha256:${sha256(urn)}`;
}

/** The document OpenSearch stores for a search document: its source, and the hashes of its long keyword values. */
export function opensearchSource(d: SearchDocument): Record<string, unknown> {
  const source = documentSource(d);
  const long: string[] = [];
  for (const [name, f] of d.fields) {
    if (f.type !== 'keyword') continue;
    for (const v of f.values) if (typeof v === 'string' && v.length > MAX_INDEXED_KEYWORD) long.push(longValueTerm(name, v));
  }
  if (long.length) source[LONG_VALUES_FIELD] = long;
  return source;
}

/**
 * Fields an index may map (OpenSearch's `index.mapping.total_fields.limit`, 1,000 by default): every
 * structured property is a field, and versioned ones one more per version.
 */
export const MAX_INDEX_FIELDS = 100_000;

const MAPPING: Record<FieldType, Record<string, unknown>> = {
  keyword: { type: 'keyword', ignore_above: MAX_INDEXED_KEYWORD },
  double: { type: 'double' },
  date: { type: 'date' },
  boolean: { type: 'boolean' },
};

/** The `properties` of a mapping holding these fields, dotted names as nested objects. */
export function mappingOf(fields: FieldSpec[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const f of fields) {
    const path = f.name.split('.');
    let at = root;
    for (const seg of path.slice(0, -1)) {
      const obj = (at[seg] ??= { type: 'object', dynamic: false, properties: {} }) as { properties: Record<string, unknown> };
      at = obj.properties;
    }
    at[path[path.length - 1]!] = MAPPING[f.type];
  }
  return root;
}
