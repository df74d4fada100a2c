/**
 * What a timeline answers, in DataHub's shapes: a {@link ChangeTransaction} per moment something
 * changed, holding its {@link ChangeEvent}s; and the helper every differ uses to compare two lists of
 * associations (tags, owners, terms, …) by a key.
 */
import type { ChangeCategory } from './categories.ts';

/** DataHub's operations of a change (its `ChangeOperation`), those svc reports. */
export type ChangeOperation = 'ADD' | 'MODIFY' | 'REMOVE' | 'CREATE' | 'SOFT_DELETE' | 'REINSTATE';

/** How much a change matters to a consumer of the entity, lowest first (DataHub's `SemanticChangeType`). */
export const SEMANTIC_CHANGES = ['NONE', 'PATCH', 'MINOR', 'MAJOR'] as const;
export type SemanticChange = (typeof SEMANTIC_CHANGES)[number];

/** Who made a change, and when (DataHub's `AuditStamp`). */
export interface AuditStamp {
  time: number;
  actor: string;
}

/** One change to an entity (DataHub's `ChangeEvent`): `modifier` is what changed (a tag's URN, a field's URN). */
export interface ChangeEvent {
  entityUrn: string;
  category: ChangeCategory;
  operation: ChangeOperation;
  modifier?: string;
  parameters?: Record<string, unknown>;
  auditStamp: AuditStamp;
  semVerChange: SemanticChange;
  description: string;
}

/**
 * Everything that changed at one moment (DataHub's `ChangeTransaction`): `semVer` is the entity's
 * computed version after it (`0.0.0-computed` for the first of a timeline), `versionStamp` the version
 * of each aspect read (`globalTags:2;ownership:1`), `rawDiff` a JSON Patch per aspect when asked for.
 */
export interface ChangeTransaction {
  timestamp: number;
  actor: string;
  semVer: string;
  semVerChange: SemanticChange;
  changeEvents: ChangeEvent[];
  versionStamp: string;
  rawDiff?: { op: string; path: string; value?: unknown }[];
}

/** What a differ knows of the change it describes: the entity, the category asked for, who and when. */
export interface DiffContext {
  entityUrn: string;
  category: ChangeCategory;
  auditStamp: AuditStamp;
}

/**
 * Computes the events of one category between two values of one aspect (undefined: absent), in the
 * order of the things they name.
 */
export type Differ = (before: unknown, after: unknown, ctx: DiffContext) => ChangeEvent[];

/** A record's field, or undefined (values are as stored: checked against the aspect's schema on write, still read defensively). */
export function field(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
}

/** A record's array field, or []. */
export function items(value: unknown, name: string): unknown[] {
  const v = field(value, name);
  return Array.isArray(v) ? v : [];
}

/** A text field, or undefined. */
export function textOf(value: unknown, name: string): string | undefined {
  const v = field(value, name);
  return typeof v === 'string' ? v : undefined;
}

/** Two JSON values alike (as stored JSON; key order does not matter). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((x, i) => same(x, bs[i]));
  }
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  return ak.length === bk.length && ak.every((k) => Object.hasOwn(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** What changed between two lists keyed by `key`: removed, added and (same key, other content) modified, each in key order. */
export function compareByKey<T>(before: readonly T[], after: readonly T[], key: (x: T) => string | undefined): { removed: T[]; added: T[]; modified: [T, T][] } {
  const index = (list: readonly T[]) => {
    const m = new Map<string, T>();
    for (const x of list) {
      const k = key(x);
      if (k !== undefined && !m.has(k)) m.set(k, x);
    }
    return m;
  };
  const b = index(before);
  const a = index(after);
  const keys = [...new Set([...b.keys(), ...a.keys()])].sort();
  const out = { removed: [] as T[], added: [] as T[], modified: [] as [T, T][] };
  for (const k of keys) {
    const was = b.get(k);
    const is = a.get(k);
    if (was === undefined) out.added.push(is!);
    else if (is === undefined) out.removed.push(was);
    else if (!same(was, is)) out.modified.push([was, is]);
  }
  return out;
}

/** A text shortened for a description (long texts are cut, with an ellipsis). */
export function short(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The URN of a field of a dataset (DataHub's schemaField URN). */
export const fieldUrn = (entityUrn: string, fieldPath: string): string => `urn:li:schemaField:(${entityUrn},${fieldPath})`;
