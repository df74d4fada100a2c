/**
 * JSON Patch (RFC 6902) with DataHub's `arrayPrimaryKeys` extension: an array named in
 * `arrayPrimaryKeys` is addressed by the value of its key field instead of by index, so
 * `/properties/urn:li:structuredProperty:foo` is the element whose `propertyUrn` is that URN.
 * `add` on an existing key replaces the element; on a missing key it appends.
 */
import { Violations } from '../errors.ts';

export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/** Field name of an array → the fields of its elements that identify them, e.g. `{properties: ['propertyUrn']}`. */
export type ArrayPrimaryKeys = Record<string, string[]>;

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Checks the shape of a patch request body; returns its operations and primary keys, or throws VALIDATION. */
export function parsePatchBody(body: unknown): { ops: PatchOperation[]; arrayPrimaryKeys: ArrayPrimaryKeys } {
  const v = new Violations();
  const raw = Array.isArray(body) ? { patch: body } : body;
  if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as { patch?: unknown }).patch)) {
    v.add('patch body must be {"patch": [operations], "arrayPrimaryKeys"?: {...}} or a JSON Patch array');
    v.throwIfAny();
  }
  const { patch, arrayPrimaryKeys, ...rest } = raw as { patch: unknown[]; arrayPrimaryKeys?: unknown };
  for (const k of Object.keys(rest)) v.add(`patch body: unknown field "${k}"`);
  patch.forEach((op, i) => {
    const o = op as Partial<PatchOperation> | null;
    if (typeof o !== 'object' || o === null) return v.add(`patch[${i}]: must be an object`);
    if (!OPS.has(String(o.op))) v.add(`patch[${i}].op: must be one of add, remove, replace, move, copy, test`);
    if (typeof o.path !== 'string' || (o.path !== '' && !o.path.startsWith('/'))) v.add(`patch[${i}].path: must be a JSON pointer such as /properties/<key>`);
    if ((o.op === 'add' || o.op === 'replace' || o.op === 'test') && !('value' in o)) v.add(`patch[${i}]: "${o.op}" needs a value`);
    if ((o.op === 'move' || o.op === 'copy') && typeof o.from !== 'string') v.add(`patch[${i}]: "${o.op}" needs from`);
  });
  const keys: ArrayPrimaryKeys = {};
  if (arrayPrimaryKeys !== undefined) {
    if (typeof arrayPrimaryKeys !== 'object' || arrayPrimaryKeys === null || Array.isArray(arrayPrimaryKeys)) {
      v.add('arrayPrimaryKeys: must be an object such as {"properties": ["propertyUrn"]}');
    } else {
      for (const [field, list] of Object.entries(arrayPrimaryKeys)) {
        if (!Array.isArray(list) || list.length === 0 || !list.every((x) => typeof x === 'string')) {
          v.add(`arrayPrimaryKeys.${field}: must be a non-empty list of field names`);
        } else keys[field] = list as string[];
      }
    }
  }
  v.throwIfAny();
  return { ops: patch as PatchOperation[], arrayPrimaryKeys: keys };
}

/** Members a path may never name: writing them would reach Object.prototype (prototype pollution). */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

function decodePointer(path: string): string[] {
  if (path === '') return [];
  const segments = path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const bad = segments.find((s) => FORBIDDEN.has(s));
  if (bad !== undefined) throw new PatchError(`path ${path}: "${bad}" is not a member an aspect can have`);
  return segments;
}

type Json = unknown;
type Container = Record<string, Json> | Json[];

class PatchError extends Error {}

/**
 * Where a path points: the container holding the target and how to address the target in it.
 * For a keyed array, `key` holds the primary key values and `index` the element's index (-1 if absent).
 */
interface Location {
  container: Container;
  member?: string;
  index?: number;
  key?: { fields: string[]; values: string[] };
}

function isObject(x: Json): x is Record<string, Json> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function locate(doc: Json, segments: string[], keys: ArrayPrimaryKeys, path: string): Location {
  let cur: Json = doc;
  let parentField: string | undefined;
  let i = 0;
  for (;;) {
    if (Array.isArray(cur)) {
      const keyFields = parentField === undefined ? undefined : keys[parentField];
      if (keyFields) {
        const values = segments.slice(i, i + keyFields.length);
        if (values.length < keyFields.length) throw new PatchError(`path ${path} must name ${keyFields.join(', ')} of the element`);
        const index = cur.findIndex((el) => isObject(el) && keyFields.every((f, j) => String(el[f]) === values[j]));
        i += keyFields.length;
        if (i === segments.length) return { container: cur, index, key: { fields: keyFields, values } };
        if (index < 0) throw new PatchError(`path ${path} does not exist`);
        parentField = undefined;
        cur = cur[index];
        continue;
      }
      const seg = segments[i]!;
      const index = seg === '-' ? cur.length : /^(0|[1-9][0-9]*)$/.test(seg) ? Number(seg) : NaN;
      if (Number.isNaN(index)) throw new PatchError(`path ${path}: "${seg}" is not an array index`);
      if (i === segments.length - 1) return { container: cur, index };
      if (index >= cur.length) throw new PatchError(`path ${path} does not exist`);
      parentField = undefined;
      cur = cur[index];
      i++;
      continue;
    }
    if (!isObject(cur)) throw new PatchError(`path ${path} does not exist`);
    const seg = segments[i]!;
    if (i === segments.length - 1) return { container: cur, member: seg };
    if (!Object.hasOwn(cur, seg)) throw new PatchError(`path ${path} does not exist`);
    parentField = seg;
    cur = cur[seg];
    i++;
  }
}

function get(loc: Location, path: string): Json {
  if (Array.isArray(loc.container)) {
    const idx = loc.index!;
    if (idx < 0 || idx >= loc.container.length) throw new PatchError(`path ${path} does not exist`);
    return loc.container[idx];
  }
  if (!Object.hasOwn(loc.container, loc.member!)) throw new PatchError(`path ${path} does not exist`);
  return loc.container[loc.member!];
}

function remove(loc: Location, path: string): Json {
  const old = get(loc, path);
  if (Array.isArray(loc.container)) loc.container.splice(loc.index!, 1);
  else delete loc.container[loc.member!];
  return old;
}

function add(loc: Location, value: Json, path: string): void {
  if (Array.isArray(loc.container)) {
    if (loc.key) {
      if (!isObject(value)) throw new PatchError(`path ${path}: the value must be an object with ${loc.key.fields.join(', ')}`);
      const el = { ...value };
      // The element's key fields are those of the path (DataHub fills them in the same way).
      loc.key.fields.forEach((f, j) => {
        if (!(f in el)) el[f] = loc.key!.values[j];
      });
      if (loc.index! >= 0) loc.container[loc.index!] = el;
      else loc.container.push(el);
      return;
    }
    if (loc.index! > loc.container.length) throw new PatchError(`path ${path}: index out of range`);
    loc.container.splice(loc.index!, 0, value);
    return;
  }
  loc.container[loc.member!] = value;
}

/**
 * Applies `ops` to a deep copy of `doc` and returns the result; throws VALIDATION naming the failing
 * operation. The input is never modified.
 */
export function applyPatch(doc: Json, ops: PatchOperation[], keys: ArrayPrimaryKeys = {}): Json {
  let root: Json = structuredClone(doc);
  ops.forEach((op, n) => {
    try {
      const segs = decodePointer(op.path);
      if (segs.length === 0) {
        if (op.op === 'test') {
          if (!deepEqual(root, op.value)) throw new PatchError('test failed');
          return;
        }
        if (op.op === 'remove') throw new PatchError('cannot remove the whole document');
        root = structuredClone(op.op === 'move' || op.op === 'copy' ? valueAt(root, op.from!, keys) : op.value);
        return;
      }
      const loc = () => locate(root, segs, keys, op.path);
      switch (op.op) {
        case 'add':
          add(loc(), structuredClone(op.value), op.path);
          break;
        case 'remove':
          remove(loc(), op.path);
          break;
        case 'replace': {
          const l = loc();
          get(l, op.path);
          if (Array.isArray(l.container) && !l.key) l.container[l.index!] = structuredClone(op.value);
          else add(l, structuredClone(op.value), op.path);
          break;
        }
        case 'move': {
          const v = remove(locate(root, decodePointer(op.from!), keys, op.from!), op.from!);
          add(loc(), v, op.path);
          break;
        }
        case 'copy':
          add(loc(), structuredClone(valueAt(root, op.from!, keys)), op.path);
          break;
        case 'test':
          if (!deepEqual(get(loc(), op.path), op.value)) throw new PatchError(`test failed at ${op.path}`);
          break;
      }
    } catch (err) {
      if (err instanceof PatchError) {
        const v = new Violations();
        v.add(`patch[${n}] (${op.op} ${op.path}): ${err.message}`);
        v.throwIfAny();
      }
      throw err;
    }
  });
  return root;
}

function valueAt(doc: Json, path: string, keys: ArrayPrimaryKeys): Json {
  const segs = decodePointer(path);
  if (segs.length === 0) return doc;
  return get(locate(doc, segs, keys, path), path);
}

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as Json[]).length && a.every((x, i) => deepEqual(x, (b as Json[])[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, Json>)[k], (b as Record<string, Json>)[k]));
}
