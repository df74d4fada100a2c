/**
 * Structured-property definition files (DataHub's `properties upsert` YAML) and the snake_case form
 * `properties get` prints: a YAML list of properties, each checked with DataHub's CLI rules and
 * messages; every problem is named with its line.
 *
 *   - id: io.acryl.privacy.retentionTime
 *     type: number
 *     cardinality: MULTIPLE
 *     entity_types: [dataset, dataFlow]
 *     allowed_values: [{value: 30, description: 30 days}, {value: 365}]
 */
import { isMap, isSeq, type YAMLMap } from 'yaml';
import { doubleText } from '../contract/doubles.ts';
import { cardinalityOf, normalizeEntityType, type PropertyDefinition } from '../contract/definitions.ts';
import { CliError } from './errors.ts';
import { readYamlFile } from './yamlFile.ts';

const KEYS = ['id', 'urn', 'qualified_name', 'type', 'cardinality', 'version', 'display_name', 'description', 'entity_types', 'allowed_values', 'type_qualifier', 'immutable'];
const TYPES = ['string', 'rich_text', 'number', 'date', 'urn'];
const PROPERTY_PREFIX = 'urn:li:structuredProperty:';
const DATA_TYPE_PREFIX = 'urn:li:dataType:';

type Json = Record<string, unknown>;
type Value = { string: string } | { double: number };

export interface PropertySpec {
  urn: string;
  /** The `propertyDefinition` aspect to write. */
  definition: Json;
  line: number;
}

/**
 * An entity type as the server stores it, by the server's rule (`dataset`, `datahub.dataset` and
 * `urn:li:entityType:datahub.dataset` → `urn:li:entityType:svc.dataset`); a name svc does not know
 * becomes a URN in svc's namespace (or DataHub's, when it names it), for the server to refuse.
 */
export function entityTypeUrn(t: string): string {
  const known = normalizeEntityType(t);
  if (known.startsWith('urn:li:entityType:')) return known;
  return `urn:li:entityType:${t.startsWith('svc.') || t.startsWith('datahub.') ? t : `svc.${t}`}`;
}
/** `number` → `urn:li:dataType:svc.number`; a URN is kept. */
export const dataTypeUrn = (t: string) => (t.startsWith(DATA_TYPE_PREFIX) ? t : `urn:li:dataType:${t.startsWith('svc.') ? t : `svc.${t}`}`);
/**
 * The type name a file's `type` gives: a short name (`number`; upper case is lowered with DataHub's
 * warning) or a data type URN (`urn:li:dataType:svc.number`, as `properties get` writes it), which is
 * not lowered: that would break it (`urn:li:datatype:…`). Either is stored as `urn:li:dataType:svc.<name>`.
 */
function typeName(type: string, warn: (m: string) => void): string {
  if (type.startsWith(DATA_TYPE_PREFIX)) return type.slice(DATA_TYPE_PREFIX.length).replace(/^svc\./, '');
  if (type !== type.toLowerCase()) {
    type = type.toLowerCase();
    warn(`Structured property type should be lowercase. Updated to ${type}`);
  }
  return type.replace(/^svc\./, '');
}

/** Whether a URN is a structured property's. */
export const isPropertyUrn = (urn: string) => urn.startsWith(PROPERTY_PREFIX);
/** An id or a URN as a structured property URN. */
export const propertyUrn = (idOrUrn: string) => (isPropertyUrn(idOrUrn) ? idOrUrn : `${PROPERTY_PREFIX}${idOrUrn}`);

/** A problem of a property, at the key (and list index) `where` names, or at the property's first line. */
type Problem = (message: string, ...where: (string | number)[]) => void;

/**
 * The properties of a file; a usage error listing every problem with its line. Warnings (an uppercase
 * type) go to `warn`.
 */
export function readPropertyFile(path: string, warn: (line: string) => void): PropertySpec[] {
  const { contents, lineOf, lineAt, unknownKeys } = readYamlFile(path);
  if (!isSeq(contents)) throw new CliError(`${path}:${lineOf(contents)}: expected a list of structured properties (- id: …)`, 2);
  const problems: string[] = [];
  const specs: PropertySpec[] = [];
  contents.items.forEach((item, i) => {
    const line = lineOf(item);
    if (!isMap(item)) {
      problems.push(`${path}:${line}: property ${i + 1} must be a mapping of keys (id, type, …)`);
      return;
    }
    unknownKeys(item as YAMLMap, KEYS, `property ${i + 1}`, problems);
    const p = (item as YAMLMap).toJSON() as Json;
    const before = problems.length;
    const spec = toSpec(p, i, line, (m, ...where) => problems.push(`${path}:${lineAt(item, ...where)}: ${m}`), warn);
    if (spec && problems.length === before) specs.push(spec);
  });
  if (problems.length) throw new CliError(problems.join('\n'), 2);
  return specs;
}

function toSpec(p: Json, i: number, line: number, problem: Problem, warn: (m: string) => void): PropertySpec | undefined {
  /** A list or a mapping where a single value goes (its own problem, see str). */
  const misshapen = (k: string) => typeof p[k] === 'object' && p[k] !== null;
  const str = (k: string): string | undefined => {
    const v = p[k];
    if (v === undefined || v === null) return undefined;
    if (misshapen(k)) {
      problem(`property ${i + 1}: ${k} must be a single value, got ${Array.isArray(v) ? 'a list' : 'a mapping'}`, k);
      return undefined;
    }
    return String(v);
  };
  /** The entries of a list of entity types, each a name or a URN. */
  const names = (k: string, items: unknown[], ...where: (string | number)[]) =>
    items.flatMap((t, j) => {
      if (typeof t === 'string' && t !== '') return [entityTypeUrn(t)];
      problem(`property ${i + 1}: ${k}[${j}] must be an entity type (a name such as dataset, or a URN)`, ...where, j);
      return [];
    });
  const id = str('id');
  const urnGiven = str('urn');
  const named = Boolean(id || urnGiven);
  // An id or urn of the wrong shape has its own problem; the other keys are checked all the same.
  if (!named && !misshapen('id') && !misshapen('urn')) problem(`property ${i + 1}: id or urn is required`);
  const urn = urnGiven ?? propertyUrn(id ?? '');
  const urnId = urn.slice(PROPERTY_PREFIX.length);
  if (named && (!urn.startsWith(PROPERTY_PREFIX) || !urnId)) problem(`property ${i + 1}: urn ${urn} is not a structured property urn (urn:li:structuredProperty:<id>)`, 'urn');
  let qualifiedName = str('qualified_name');
  if (named && qualifiedName !== undefined && qualifiedName !== urnId) problem(`property ${i + 1}: ID in the urn and the qualified_name must match`, 'qualified_name');
  qualifiedName ??= urnId;
  const type = str('type');
  const bare = type === undefined ? undefined : typeName(type, warn);
  if (bare === undefined) problem(`property ${i + 1}: type is required (one of ${TYPES.join(', ')})`);
  else if (!TYPES.includes(bare)) problem(`Type ${bare} is not allowed. Allowed types are ${TYPES.join(', ')}`, 'type');
  const definition: Json = { qualifiedName, valueType: dataTypeUrn(bare ?? 'string') };
  for (const [from, to] of [['display_name', 'displayName'], ['description', 'description'], ['version', 'version']] as const) {
    if (str(from) !== undefined) definition[to] = str(from);
  }
  if (p.cardinality !== undefined) {
    const c = str('cardinality')!.toUpperCase();
    if (c !== 'SINGLE' && c !== 'MULTIPLE') problem(`property ${i + 1}: cardinality must be SINGLE or MULTIPLE, got ${str('cardinality')}`, 'cardinality');
    definition.cardinality = c;
  }
  if (p.immutable !== undefined) {
    if (typeof p.immutable !== 'boolean') problem(`property ${i + 1}: immutable must be true or false`, 'immutable');
    definition.immutable = p.immutable;
  }
  const list = (k: string): unknown[] | undefined => {
    if (p[k] === undefined || p[k] === null) return undefined;
    if (!Array.isArray(p[k])) {
      problem(`property ${i + 1}: ${k} must be a list`, k);
      return undefined;
    }
    return p[k] as unknown[];
  };
  definition.entityTypes = names('entity_types', list('entity_types') ?? [], 'entity_types');
  const allowed = list('allowed_values');
  if (allowed) {
    definition.allowedValues = allowed.map((a, j) => {
      const entry = (typeof a === 'object' && a !== null ? a : { value: a }) as { value?: unknown; description?: unknown };
      if (entry.value === undefined || entry.value === null || typeof entry.value === 'object') problem(`property ${i + 1}: allowed_values[${j}] needs a plain value (a number or a string)`, 'allowed_values', j);
      const value: Value = bare === 'number' && typeof entry.value === 'number' ? { double: entry.value } : bare === 'number' && !Number.isNaN(Number(entry.value)) && String(entry.value).trim() !== '' ? { double: Number(entry.value) } : { string: String(entry.value) };
      return entry.description === undefined || entry.description === null ? { value } : { value, description: String(entry.description) };
    });
  }
  const qualifier = p.type_qualifier as { allowed_types?: unknown } | undefined;
  if (qualifier !== undefined && qualifier !== null) {
    if (typeof qualifier !== 'object' || !Array.isArray(qualifier.allowed_types)) problem(`property ${i + 1}: type_qualifier must be {allowed_types: [entity types]}`, 'type_qualifier');
    else definition.typeQualifier = { allowedTypes: names('type_qualifier.allowed_types', qualifier.allowed_types, 'type_qualifier', 'allowed_types') };
  }
  return { urn, definition, line };
}

/** A stored definition in the snake_case form `properties get` prints (values as strings, unset keys left out). */
export function snakeCase(urn: string, d: Json): Json {
  const printed = (v: Value) => ('double' in v ? doubleText(v.double) : v.string);
  const out: Json = { urn, qualified_name: d.qualifiedName, type: d.valueType, description: d.description, display_name: d.displayName, entity_types: d.entityTypes, cardinality: cardinalityOf(d as Pick<PropertyDefinition, 'cardinality'>) };
  const allowed = d.allowedValues as { value: Value; description?: string }[] | undefined;
  if (allowed) out.allowed_values = allowed.map((a) => (a.description === undefined ? { value: printed(a.value) } : { value: printed(a.value), description: a.description }));
  const q = d.typeQualifier as { allowedTypes?: string[] } | undefined;
  if (q?.allowedTypes) out.type_qualifier = { allowed_types: q.allowedTypes };
  if (d.immutable !== undefined) out.immutable = d.immutable;
  if (d.version !== undefined) out.version = d.version;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined && v !== null));
}
