/**
 * Writes server/src/contract/datahubModel.json: DataHub's model (entity types, their key aspects and
 * key fields, their aspects, which aspects are time series, and the structure of every aspect as JSON
 * Schema) as the published `acryl-datahub` package has it, read from its Avro schemas
 * (`datahub/metadata/schemas/*.avsc`). Only names, types and annotations are taken: no doc text.
 *
 *   npx tsx test/scripts/datahub-model.ts [<site-packages/datahub/metadata/schemas> …]
 *
 * Without arguments it reads the client virtualenvs the test setup provisions (`SVC_DATAHUB_BINS`, or
 * every `datahub-<version>` under provision.sh's cache, `SVC_CACHE_DIR`). The newest version is the
 * model; an older one only adds the fields its records had that the newest dropped (as optional
 * fields), so that its clients' writes are still taken (0.14's `Criterion.value`).
 *
 * The JSON Schemas describe an aspect as DataHub's clients send it (the Pegasus JSON form, see
 * `datahub.emitter.serialization_helper.pre_json_transform`):
 * - a record is an object of its fields, closed; a field is required unless it has a default or is
 *   optional (`["null", T]`), and an optional field is absent rather than null;
 * - a union (but `["null", T]`, an optional T) is an object of exactly one member, keyed by the
 *   member's Pegasus name (`{"com.linkedin.schema.StringType": {}}`, `{"string": "x"}`, `{"double": 1.0}`),
 *   even a union of one type, and a union
 *   with aliases (a record with a `fieldDiscriminator`) is an object of exactly one of its fields;
 * - an enum is one of its symbols; int and long are integers in range (a long within what a
 *   JavaScript number holds exactly), float and double numbers, bytes strings;
 * - a string DataHub types as a URN (the `Urn` annotation) must be one: of the entity type its
 *   class names (`DatasetUrn`), or of any type (`Urn`).
 */
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

type Avro = string | AvroNode | Avro[];
interface AvroNode {
  type: Avro;
  name?: string;
  namespace?: string;
  fields?: AvroField[];
  symbols?: string[];
  items?: Avro;
  values?: Avro;
  Aspect?: { name: string; type?: string; keyForEntity?: string; entityAspects?: string[]; entityCategory?: string };
  [annotation: string]: unknown;
}
interface AvroField {
  name: string;
  type: Avro;
  default?: unknown;
  Urn?: string;
  urn_is_array?: boolean;
  entityTypes?: string[];
  [annotation: string]: unknown;
}
type Schema = Record<string, unknown>;

const OUT = resolve(import.meta.dirname, '../../server/src/contract/datahubModel.json');
/** Where test/infra/provision.sh installs the clients. */
const CACHE = process.env.SVC_CACHE_DIR ?? join(homedir(), '.cache/svc-test');
const PEGASUS2AVRO = /\.pegasus2avro(?=\.|$)/;

/** DataHub's Pegasus name of an Avro name (`com.linkedin.pegasus2avro.common.Status` → `com.linkedin.common.Status`). */
const pegasusName = (full: string) => full.replace(PEGASUS2AVRO, '');

const LONG = { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
const INT = { type: 'integer', minimum: -2147483648, maximum: 2147483647 };
const PRIMITIVES: Record<string, Schema> = {
  string: { type: 'string' },
  bytes: { type: 'string' },
  boolean: { type: 'boolean' },
  int: INT,
  long: LONG,
  float: { type: 'number' },
  double: { type: 'number' },
};

/** The entity type a URN class names: `DatasetUrn` → dataset, `MLModelUrn` → mlModel, `CorpuserUrn` → corpuser. */
function urnEntityType(urnClass: string): string | undefined {
  if (urnClass === 'Urn') return undefined;
  const name = urnClass.replace(/Urn$/, '');
  return name.startsWith('ML') ? `ml${name.slice(2)}` : `${name[0]!.toLowerCase()}${name.slice(1)}`;
}

interface Version {
  version: string;
  dir: string;
}

function versionsToRead(args: string[]): Version[] {
  const dirs = args.length
    ? args
    : (process.env.SVC_DATAHUB_BINS?.split(' ').filter(Boolean).map((bin) => resolve(bin, '..')) ??
      readdirSync(CACHE)
        .filter((d) => /^datahub-[\d.]+$/.test(d))
        .map((d) => join(CACHE, d)));
  return dirs
    .map((dir) => {
      let schemas = dir;
      if (!dir.endsWith('schemas')) {
        const lib = join(dir, 'lib');
        const python = readdirSync(lib).find((d) => d.startsWith('python3'));
        schemas = join(lib, python!, 'site-packages/datahub/metadata/schemas');
      }
      if (!existsSync(schemas)) throw new Error(`no Avro schemas under ${schemas}`);
      const version = /datahub-([\d.]+)/.exec(schemas)?.[1] ?? 'unknown';
      return { version, dir: schemas };
    })
    .sort((a, b) => compareVersions(b.version, a.version));
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Every aspect's Avro schema of one version (the files with an `Aspect` annotation). */
function aspectSchemas(dir: string): AvroNode[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.avsc'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as AvroNode)
    .filter((s) => s.Aspect !== undefined);
}

/** The records of a set of schemas by Pegasus name, with their field names (to find fields an older version had). */
function recordFields(schemas: AvroNode[]): Map<string, Map<string, AvroField>> {
  const out = new Map<string, Map<string, AvroField>>();
  const walk = (t: Avro, ns: string | undefined): void => {
    if (Array.isArray(t)) return t.forEach((x) => walk(x, ns));
    if (typeof t !== 'object') return;
    const here = t.namespace ?? ns;
    if (t.type === 'record') {
      const full = pegasusName(t.name!.includes('.') ? t.name! : `${here}.${t.name}`);
      if (!out.has(full)) out.set(full, new Map(t.fields!.map((f) => [f.name, f])));
      t.fields!.forEach((f) => walk(f.type, here));
    } else if (t.type === 'array') walk(t.items!, here);
    else if (t.type === 'map') walk(t.values!, here);
    else if (typeof t.type === 'object') walk(t.type, here);
  };
  schemas.forEach((s) => walk(s, undefined));
  return out;
}

/** Converts Avro types to JSON Schema, each named type once, under `definitions` by its Pegasus name. */
class Converter {
  readonly definitions: Record<string, Schema> = {};
  /** Fields an older version's records had that the newest's lack, by record. */
  constructor(
    private readonly olderFields: Map<string, Map<string, AvroField>>,
    private readonly entityKeyFields: Map<string, number>,
  ) {}

  /** The schema of a type; `urn` is the field's URN class when the strings of this type are URNs. */
  convert(t: Avro, ns: string | undefined, scope: Map<string, Schema>, urn?: string): Schema {
    if (typeof t === 'string') {
      if (t in PRIMITIVES) return t === 'string' && urn ? this.urnSchema(urn) : PRIMITIVES[t]!;
      const full = t.includes('.') ? t : `${ns}.${t}`;
      const named = scope.get(pegasusName(full)) ?? scope.get(pegasusName(t));
      if (!named) throw new Error(`unresolved type ${t}`);
      return named;
    }
    if (Array.isArray(t)) return this.union(t, ns, scope, urn);
    const here = t.namespace ?? ns;
    switch (t.type) {
      case 'record':
        return this.record(t, here, scope);
      case 'enum': {
        const name = pegasusName(t.name!.includes('.') ? t.name! : `${here}.${t.name}`);
        this.definitions[name] = { enum: t.symbols };
        return this.ref(name, scope);
      }
      case 'array':
        return { type: 'array', items: this.convert(t.items!, here, scope, urn) };
      case 'map':
        return { type: 'object', additionalProperties: this.convert(t.values!, here, scope, urn) };
      case 'fixed':
        return { type: 'string' };
      default:
        // A primitive spelled as an object (`{"type": "string", "java": …}`).
        return this.convert(t.type, here, scope, urn);
    }
  }

  private ref(name: string, scope: Map<string, Schema>): Schema {
    const ref = { $ref: `#/definitions/${name}` };
    scope.set(name, ref);
    return ref;
  }

  private urnSchema(urnClass: string): Schema {
    const type = urnEntityType(urnClass);
    if (type === undefined) {
      return { type: 'string', pattern: '^urn:li:[A-Za-z][A-Za-z0-9_]*:.', errorMessage: { pattern: 'must be a URN, urn:li:<entity type>:<id>' } };
    }
    const tuple = (this.entityKeyFields.get(type) ?? 1) > 1 || type === 'datasetField';
    return {
      type: 'string',
      pattern: `^urn:li:${type}:${tuple ? '\\(.+\\)$' : '.'}`,
      errorMessage: { pattern: `must be a ${type} URN, urn:li:${type}:${tuple ? '(…)' : '<id>'}` },
    };
  }

  private record(t: AvroNode, ns: string | undefined, scope: Map<string, Schema>): Schema {
    const name = pegasusName(t.name!.includes('.') ? t.name! : `${ns}.${t.name}`);
    const ref = this.ref(name, scope);
    const fields = t.fields!;
    const discriminated = fields.some((f) => f.name === 'fieldDiscriminator');
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const f of fields) {
      if (f.name === 'fieldDiscriminator') continue;
      const urn = typeof f.Urn === 'string' ? f.Urn : undefined;
      properties[f.name] = this.convert(f.type, ns, scope, urn);
      if (!('default' in f) && !discriminated) required.push(f.name);
    }
    for (const [field, older] of this.olderFields.get(name) ?? []) {
      if (!(field in properties) && field !== 'fieldDiscriminator') properties[field] = this.convert(older.type, ns, new Map(scope), typeof older.Urn === 'string' ? older.Urn : undefined);
    }
    const schema: Schema = { type: 'object', properties };
    if (discriminated) {
      // A union with aliases: exactly one of its members, by its alias.
      Object.assign(schema, { minProperties: 1, maxProperties: 1, errorMessage: { minProperties: `must have exactly one of ${Object.keys(properties).join(', ')}`, maxProperties: `must have exactly one of ${Object.keys(properties).join(', ')}` } });
    } else if (required.length) schema.required = required;
    schema.additionalProperties = false;
    this.definitions[name] = schema;
    return ref;
  }

  private union(members: Avro[], ns: string | undefined, scope: Map<string, Schema>, urn?: string): Schema {
    const present = members.filter((m) => m !== 'null');
    // An optional value (`["null", T]`) is T or absent; a union of one type without null is still an
    // object keyed by it (ChartInfo.inputs: `[{"string": "urn:li:dataset:…"}]`).
    if (present.length === 1 && present.length < members.length) return this.convert(present[0]!, ns, scope, urn);
    const properties: Record<string, Schema> = {};
    for (const m of present) properties[this.memberKey(m, ns)] = this.convert(m, ns, scope, urn);
    const keys = Object.keys(properties);
    const message = `must be an object of exactly one of ${keys.map((k) => `"${k}"`).join(', ')}`;
    return { type: 'object', properties, minProperties: 1, maxProperties: 1, additionalProperties: false, errorMessage: { minProperties: message, maxProperties: message, additionalProperties: message } };
  }

  /** How a union member is keyed in Pegasus JSON: a named type by its Pegasus name, another by its type. */
  private memberKey(m: Avro, ns: string | undefined): string {
    if (typeof m === 'string') return m in PRIMITIVES ? m : pegasusName(m.includes('.') ? m : `${ns}.${m}`);
    if (Array.isArray(m)) throw new Error('a union inside a union');
    if (m.type === 'record' || m.type === 'enum' || m.type === 'fixed') return pegasusName(m.name!.includes('.') ? m.name! : `${m.namespace ?? ns}.${m.name}`);
    if (typeof m.type === 'string' && (m.type === 'array' || m.type === 'map')) return m.type;
    return this.memberKey(m.type, ns);
  }
}

/** How a key field's part of the URN is checked: a URN of a type, any URN, or one of an enum's symbols. */
interface KeyField {
  name: string;
  urnOf?: string;
  urn?: true;
  symbols?: string[];
}

function keyField(f: AvroField): KeyField {
  const out: KeyField = { name: f.name };
  // containerKey's guid is optional in the record; as a part of a URN it is there all the same.
  const t = Array.isArray(f.type) ? f.type.filter((m) => m !== 'null') : [f.type];
  const type = t.length === 1 && typeof t[0] === 'object' && !Array.isArray(t[0]) ? t[0] : undefined;
  if (type?.type === 'enum') return { ...out, symbols: type.symbols };
  if (t.length !== 1 || (t[0] !== 'string' && type?.type !== 'string')) throw new Error(`key field ${f.name} is neither a string nor an enum`);
  if (f.Urn === undefined) return out;
  if (f.entityTypes?.length === 1) return { ...out, urnOf: f.entityTypes[0] };
  const typed = urnEntityType(f.Urn);
  if (typed) return { ...out, urnOf: typed };
  // DataHub's URN classes take a platform part as a dataPlatform URN (DatasetUrn, MlModelUrn, …).
  if (f.name === 'platform') return { ...out, urnOf: 'dataPlatform' };
  return { ...out, urn: true };
}

function main(): void {
  const versions = versionsToRead(process.argv.slice(2));
  const [newest, ...older] = versions;
  if (!newest) throw new Error('no acryl-datahub package found: pass the path of its metadata/schemas folder');
  const schemas = aspectSchemas(newest.dir);
  const olderFields = new Map<string, Map<string, AvroField>>();
  const newestFields = recordFields(schemas);
  for (const v of older) {
    for (const [record, fields] of recordFields(aspectSchemas(v.dir))) {
      for (const [name, f] of fields) {
        if (newestFields.get(record)?.has(name) === false) {
          if (!olderFields.has(record)) olderFields.set(record, new Map());
          olderFields.get(record)!.set(name, f);
        }
      }
    }
  }
  const keys = schemas.filter((s) => s.Aspect!.keyForEntity);
  const keyFieldCounts = new Map(keys.map((s) => [s.Aspect!.keyForEntity!, s.fields!.length]));
  const converter = new Converter(olderFields, keyFieldCounts);
  const aspects: Record<string, { class: string; timeseries?: true }> = {};
  for (const s of schemas) {
    const name = s.Aspect!.name;
    const cls = pegasusName(`${s.namespace}.${s.name}`);
    converter.convert(s, s.namespace, new Map());
    aspects[name] = { class: cls, ...(s.Aspect!.type === 'timeseries' ? { timeseries: true as const } : {}) };
    if (s.Aspect!.type === 'timeseries') {
      const ts = s.fields!.find((f) => f.name === 'timestampMillis');
      if (!ts || 'default' in ts) throw new Error(`time series aspect ${name} without a required timestampMillis`);
    }
  }
  const entities = keys
    .map((s) => ({
      name: s.Aspect!.keyForEntity!,
      keyAspect: s.Aspect!.name,
      keyFields: s.fields!.map(keyField),
      aspects: s.Aspect!.entityAspects!.filter((a) => a !== s.Aspect!.name),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entities) {
    for (const a of e.aspects) if (!aspects[a]) throw new Error(`${e.name} names aspect ${a}, which has no schema`);
    for (const f of e.keyFields) if (f.urnOf && !keyFieldCounts.has(f.urnOf)) throw new Error(`${e.name}.${f.name} is a URN of unknown type ${f.urnOf}`);
  }
  const definitions = Object.fromEntries(Object.entries(converter.definitions).sort(([a], [b]) => a.localeCompare(b)));
  const header = {
    $comment:
      'Generated by test/scripts/datahub-model.ts from the Avro schemas of the acryl-datahub package (names, key aspects, time series flags and field structure; no doc text). Do not edit: run it again.',
    source: { package: 'acryl-datahub', version: newest.version, olderFieldsFrom: older.map((v) => v.version) },
  };
  // One entity, aspect or definition a line: a new DataHub version shows as the lines it changes.
  const lines = (o: Record<string, unknown>) =>
    Object.entries(o)
      .map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
      .join(',\n');
  const text = [
    '{',
    `  "$comment": ${JSON.stringify(header.$comment)},`,
    `  "source": ${JSON.stringify(header.source)},`,
    '  "entities": [',
    entities.map((e) => `    ${JSON.stringify(e)}`).join(',\n'),
    '  ],',
    '  "aspects": {',
    lines(aspects),
    '  },',
    '  "definitions": {',
    lines(definitions),
    '  }',
    '}',
    '',
  ].join('\n');
  JSON.parse(text);
  writeFileSync(OUT, text);
  const timeseries = Object.values(aspects).filter((a) => a.timeseries).length;
  console.log(`${OUT}: ${entities.length} entity types, ${Object.keys(aspects).length} aspects (${timeseries} time series), ${Object.keys(definitions).length} definitions, ${text.length} bytes, from acryl-datahub ${newest.version}${older.length ? ` (+ fields of ${older.map((v) => v.version).join(', ')})` : ''}`);
}

main();
