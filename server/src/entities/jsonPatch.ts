/**
 * JSON Patch (RFC 6902, applied by fast-json-patch) with DataHub's `arrayPrimaryKeys` extension: an
 * array named in `arrayPrimaryKeys` is addressed by the value of its key field instead of by index,
 * so `/properties/urn:li:structuredProperty:foo` is the element whose `propertyUrn` is that URN.
 * `add` on an existing key replaces the element; on a missing key it appends (with the key fields
 * filled in from the path); `move` and `copy` to a key give the value that key. Each operation's keyed
 * paths are translated to indices against the document as the operations before it left it, then
 * applied.
 */
import jsonpatch, { type Operation } from 'fast-json-patch';
import { SvcError, Violations } from '../shared/errors.ts';
import { compileSchema } from '../shared/validation.ts';

export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/** Field name of an array → the fields of its elements that identify them, e.g. `{properties: ['propertyUrn']}`. */
export type ArrayPrimaryKeys = Record<string, string[]>;

const POINTER = { type: 'string', pattern: '^(/([^~/]|~[01])*)*$', errorMessage: { pattern: 'must be a JSON pointer such as /properties/<key>' } };

/** One operation: RFC 6902 (members it does not define are ignored, as the RFC says). */
export const PATCH_OPERATION = {
  type: 'object',
  properties: { op: { enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] }, path: POINTER, from: POINTER, value: {} },
  required: ['op', 'path'],
  allOf: [
    { if: { type: 'object', properties: { op: { enum: ['add', 'replace', 'test'] } }, required: ['op'] }, then: { type: 'object', properties: { value: {} }, required: ['value'] } },
    { if: { type: 'object', properties: { op: { enum: ['move', 'copy'] } }, required: ['op'] }, then: { type: 'object', properties: { from: {} }, required: ['from'] } },
  ],
};

/** The body of a PATCH: DataHub's `{"patch", "arrayPrimaryKeys"}` (a bare RFC 6902 array is taken as `patch`). */
export const PATCH_BODY = {
  type: 'object',
  properties: {
    patch: { type: 'array', items: PATCH_OPERATION },
    arrayPrimaryKeys: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 },
      errorMessage: { type: 'must be an object such as {"properties": ["propertyUrn"]}' },
    },
  },
  required: ['patch'],
  additionalProperties: false,
  errorMessage: {
    type: 'must be {"patch": [operations], "arrayPrimaryKeys"?: {...}} or a JSON Patch array',
    required: 'must be {"patch": [operations], "arrayPrimaryKeys"?: {...}} or a JSON Patch array',
  },
};

const checkPatchBody = compileSchema(PATCH_BODY, 'body');

/** Checks the shape of a patch request body; returns its operations and primary keys, or throws VALIDATION. */
export function parsePatchBody(body: unknown): { ops: PatchOperation[]; arrayPrimaryKeys: ArrayPrimaryKeys } {
  const normalised = Array.isArray(body) ? { patch: body } : body;
  const problems = checkPatchBody(normalised);
  if (problems.length) throw SvcError.validation(problems);
  const { patch, arrayPrimaryKeys } = normalised as { patch: PatchOperation[]; arrayPrimaryKeys?: ArrayPrimaryKeys };
  return { ops: patch, arrayPrimaryKeys: arrayPrimaryKeys ?? {} };
}

/** Members a path may never name: writing them would reach Object.prototype (prototype pollution). */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

class PatchError extends Error {}

type Json = unknown;

function isObject(x: Json): x is Record<string, Json> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function decodePointer(path: string): string[] {
  if (path === '') return [];
  const segments = path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const bad = segments.find((s) => FORBIDDEN.has(s));
  if (bad !== undefined) throw new PatchError(`path ${path}: "${bad}" is not a member an aspect can have`);
  return segments;
}

/** A string (a URN, say) as one JSON Pointer segment (`~` and `/` escaped). */
export const pointerSegment = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');
const encodePointer = (segments: string[]) => segments.map((s) => `/${pointerSegment(s)}`).join('');

/** Where a path points once its keyed segments are indices: the RFC 6902 path, and whether its target exists. */
interface Resolved {
  segments: string[];
  exists: boolean;
  /** For a path ending at a keyed element: its key fields and values, and the array it is (or goes) in. */
  key?: { fields: string[]; values: string[]; array: Json[] };
}

/**
 * The index of each keyed element of the arrays a patch has looked into, by key (the values of the
 * key fields joined), so that finding an element costs the same in an array of 10,000 as of 10: a
 * search of the array per operation made a patch of n operations cost n² (16,000 operations: 7 s).
 * Kept while operations only add keyed elements (as the SDKs' patches do), rebuilt after any other.
 */
type KeyIndex = WeakMap<Json[], Map<string, Map<string, number>>>;

const keyOf = (values: string[]) => values.join('\u0000');

function indexOfKey(cache: KeyIndex, array: Json[], fields: string[], values: string[]): number {
  let byFields = cache.get(array);
  if (!byFields) cache.set(array, (byFields = new Map()));
  const name = keyOf(fields);
  let byKey = byFields.get(name);
  if (!byKey) {
    byKey = new Map();
    array.forEach((el, i) => {
      if (!isObject(el)) return;
      const k = keyOf(fields.map((f) => String(el[f])));
      if (!byKey!.has(k)) byKey!.set(k, i);
    });
    byFields.set(name, byKey);
  }
  return byKey.get(keyOf(values)) ?? -1;
}

/**
 * Resolves `path` against `doc`: keyed array segments become indices ('-' for a key not present),
 * and every other segment must name an own member (or an index) of an existing container.
 */
function resolve(doc: Json, path: string, keys: ArrayPrimaryKeys, cache: KeyIndex = new WeakMap()): Resolved {
  const segments = decodePointer(path);
  const out: string[] = [];
  let cur: Json = doc;
  let parentField: string | undefined;
  for (let i = 0; i < segments.length; i++) {
    const last = (n: number) => i + n === segments.length;
    if (Array.isArray(cur) && parentField !== undefined && keys[parentField]) {
      const fields = keys[parentField]!;
      const values = segments.slice(i, i + fields.length);
      if (values.length < fields.length) throw new PatchError(`path ${path} must name ${fields.join(', ')} of the element`);
      const index = indexOfKey(cache, cur, fields, values);
      i += fields.length - 1;
      if (last(1)) return { segments: [...out, index < 0 ? '-' : String(index)], exists: index >= 0, key: { fields, values, array: cur } };
      if (index < 0) throw new PatchError(`path ${path} does not exist`);
      out.push(String(index));
      cur = cur[index];
      parentField = undefined;
      continue;
    }
    const seg = segments[i]!;
    out.push(seg);
    if (Array.isArray(cur)) {
      const index = seg === '-' ? cur.length : /^(0|[1-9][0-9]*)$/.test(seg) ? Number(seg) : NaN;
      if (Number.isNaN(index)) throw new PatchError(`path ${path}: "${seg}" is not an array index`);
      if (last(1)) return { segments: out, exists: index < cur.length };
      if (index >= cur.length) throw new PatchError(`path ${path} does not exist`);
      cur = cur[index];
      parentField = undefined;
      continue;
    }
    if (!isObject(cur)) throw new PatchError(`path ${path} does not exist`);
    if (last(1)) return { segments: out, exists: Object.hasOwn(cur, seg) };
    if (!Object.hasOwn(cur, seg)) throw new PatchError(`path ${path} does not exist`);
    cur = cur[seg];
    parentField = seg;
  }
  return { segments: out, exists: true };
}

/** `op` as an RFC 6902 operation on `doc`: keyed paths as indices, an `add` on an existing key as a replace. */
function translate(doc: Json, op: PatchOperation, keys: ArrayPrimaryKeys, cache?: KeyIndex): Operation {
  const target = resolve(doc, op.path, keys, cache);
  const from = op.from === undefined ? undefined : resolve(doc, op.from, keys, cache);
  if (from && !from.exists) throw new PatchError(`path ${op.from} does not exist`);
  if ((op.op === 'remove' || op.op === 'replace' || op.op === 'test') && !target.exists) throw new PatchError(`path ${op.path} does not exist`);
  const path = encodePointer(target.segments);
  if (op.op === 'add' && target.key) {
    if (!isObject(op.value)) throw new PatchError(`path ${op.path}: the value must be an object with ${target.key.fields.join(', ')}`);
    // The element's key fields are those of the path (DataHub fills them in the same way); a value
    // naming another key would land in the path's place under a key the path does not name.
    const value: Record<string, Json> = structuredClone(op.value);
    target.key.fields.forEach((f, j) => {
      if (!Object.hasOwn(value, f)) value[f] = target.key!.values[j];
      else if (String(value[f]) !== target.key!.values[j]) throw new PatchError(`the path names ${f} ${target.key!.values[j]}, but the value's ${f} is ${JSON.stringify(value[f])}`);
    });
    return target.exists ? { op: 'replace', path, value } : { op: 'add', path, value };
  }
  switch (op.op) {
    case 'add':
    case 'replace':
    case 'test':
      return { op: op.op, path, value: structuredClone(op.value) };
    case 'remove':
      return { op: 'remove', path };
    default:
      return { op: op.op, path, from: encodePointer(from!.segments) };
  }
}

/**
 * Applies `ops` to a copy of `doc` and returns the result; throws VALIDATION naming the failing
 * operation. The input is never modified.
 */
export function applyPatch(doc: Json, ops: PatchOperation[], keys: ArrayPrimaryKeys = {}): Json {
  let root: Json = structuredClone(doc);
  let cache: KeyIndex = new WeakMap();
  ops.forEach((op, n) => {
    try {
      if ((op.op === 'move' || op.op === 'copy') && resolve(root, op.path, keys, cache).key) {
        root = moveToKey(root, op, keys);
        cache = new WeakMap();
        return;
      }
      const t = translate(root, op, keys, cache);
      // RFC 6902: a location cannot be moved into one of its children (fast-json-patch fails on it).
      if (t.op === 'move' && t.path.startsWith(`${t.from}/`)) throw new PatchError(`from ${op.from} contains path ${op.path}: a value cannot be moved into itself`);
      root = jsonpatch.applyOperation(root, t, true, true, true).newDocument;
      const key = op.op === 'add' ? resolve(root, op.path, keys, cache).key : undefined;
      // A keyed element added at the end is indexed; any other change may move elements.
      if (key && t.op === 'add' && t.path.endsWith('/-')) cache.get(key.array)?.get(keyOf(key.fields))?.set(keyOf(key.values), key.array.length - 1);
      else if (!(key && t.op === 'replace') && t.op !== 'test') cache = new WeakMap();
    } catch (err) {
      if (!(err instanceof PatchError) && !(err instanceof jsonpatch.JsonPatchError)) throw err;
      const v = new Violations();
      v.add(`patch[${n}] (${op.op} ${op.path}): ${err instanceof PatchError ? err.message : describe(err)}`);
      v.throwIfAny();
    }
  });
  return root;
}

/**
 * A `move` or `copy` to a keyed element (`/properties/<urn>`), as RFC 6902 defines them (the value at
 * `from`, removed there for a move, then added at `path`), where adding at a keyed path makes the
 * value that element: the value takes the key of its new path, so that moving
 * `/properties/urn:li:structuredProperty:a` to `/properties/urn:li:structuredProperty:b` gives b the
 * values a had (an element keeping a's key would land under a, the path naming b). An element moved
 * onto itself stays where it is.
 */
function moveToKey(root: Json, op: PatchOperation, keys: ArrayPrimaryKeys): Json {
  const from = resolve(root, op.from!, keys);
  if (!from.exists) throw new PatchError(`path ${op.from} does not exist`);
  const target = resolve(root, op.path, keys);
  const fromPath = encodePointer(from.segments);
  if (op.op === 'move' && target.exists && fromPath === encodePointer(target.segments)) return root;
  if (op.op === 'move' && encodePointer(target.segments).startsWith(`${fromPath}/`)) throw new PatchError(`from ${op.from} contains path ${op.path}: a value cannot be moved into itself`);
  const value: Json = structuredClone(jsonpatch.getValueByPointer(root, fromPath));
  if (!isObject(value)) throw new PatchError(`path ${op.path}: the value at ${op.from} must be an object with ${target.key!.fields.join(', ')}`);
  target.key!.fields.forEach((f, j) => (value[f] = target.key!.values[j]));
  const rest = op.op === 'move' ? jsonpatch.applyOperation(root, { op: 'remove', path: fromPath }, true, true, true).newDocument : root;
  return jsonpatch.applyOperation(rest, translate(rest, { op: 'add', path: op.path, value }, keys), true, true, true).newDocument;
}

/** fast-json-patch's error as a message (its name says which rule failed). */
function describe(err: InstanceType<typeof jsonpatch.JsonPatchError>): string {
  switch (err.name) {
    case 'TEST_OPERATION_FAILED':
      return 'test failed';
    case 'OPERATION_VALUE_OUT_OF_BOUNDS':
      return 'index out of range';
    default:
      return err.message.split('\n')[0]!;
  }
}
