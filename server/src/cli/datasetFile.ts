/**
 * Dataset files (DataHub's `dataset upsert` YAML): a list of datasets (or one), each `id` + `platform`
 * (+ `env`, default PROD) or `urn`, with `name`, `description`, `properties`, `subtype(s)`,
 * dataset-level `structured_properties` and, per schema field, field-level ones (written on the
 * field's schemaField URN). Every problem is named with its line.
 *
 *   - id: orders
 *     platform: hive
 *     structured_properties: {io.acryl.privacy.retentionTime: 30}
 *     schema:
 *       file: orders.avsc
 *       fields:
 *         - id: customer_id
 *           structured_properties: {io.acryl.dataManagement.deprecationDate: "2023-01-01"}
 *     downstreams: [orders_daily]
 *
 * `schema.file` is an Avro schema (relative to the YAML file), written as `schemaMetadata` (see
 * avroSchema.ts; a field's `description` and `type` in `schema.fields` override the file's doc and
 * native type). `downstreams` are dataset URNs, or names on the same platform and env; each gets this
 * dataset added to its `upstreamLineage`.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isMap, isSeq, type YAMLMap } from 'yaml';
import { avroFields } from './avroSchema.ts';
import { CliError } from './errors.ts';
import { fileProblem } from './files.ts';
import { propertyUrn } from './propertyFile.ts';
import { readYamlFile } from './yamlFile.ts';
import { entityUrn } from '../contract/entities.ts';

const KEYS = ['id', 'platform', 'env', 'urn', 'name', 'description', 'properties', 'subtype', 'subtypes', 'schema', 'structured_properties', 'downstreams'];
const FIELD_KEYS = ['id', 'urn', 'type', 'description', 'structured_properties'];
const SCHEMA_KEYS = ['file', 'fields'];

type Value = { string: string } | { double: number };
export interface Assignment {
  propertyUrn: string;
  values: Value[];
}

export interface DatasetSpec {
  urn: string;
  /** The dataset's aspects (v3 batch form: aspect → {value}). */
  aspects: Record<string, { value: unknown }>;
  /** schemaField URN → its structured properties. */
  fields: { urn: string; properties: Assignment[] }[];
  /** Dataset URNs that get this dataset as an upstream. */
  downstreams: string[];
}

/** `schemaMetadata` of a dataset from its Avro file, with the file's fields as `schema.fields` amends them. */
function schemaMetadata(file: string, yamlPath: string, platform: string, given: Record<string, unknown>[], problem: (m: string) => void) {
  const path = resolve(dirname(yamlPath), file);
  let text: string;
  let avro: ReturnType<typeof avroFields>;
  try {
    text = readFileSync(path, 'utf8');
    avro = avroFields(text);
  } catch (err) {
    // The path it was read at, when that is not the one written (a path is relative to the YAML file).
    problem(`schema.file ${file}${path === file ? '' : ` (read at ${path}, relative to the YAML file)`}: ${fileProblem(err, path)}`);
    return undefined;
  }
  const byId = new Map(given.filter((f) => f.id !== undefined).map((f) => [String(f.id), f]));
  const fields = avro.fields.map((f) => {
    const g = byId.get(f.fieldPath);
    return { ...f, ...(g?.description !== undefined ? { description: String(g.description) } : {}), ...(g?.type !== undefined ? { nativeDataType: String(g.type) } : {}) };
  });
  return { schemaName: avro.name, platform, version: 0, hash: '', platformSchema: { 'com.linkedin.schema.OtherSchema': { rawSchema: text } }, fields };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A key given a value (an empty `key:` is as good as none). */
const present = (v: unknown) => v !== undefined && v !== null;

/** `{fqn: value or list}` as assignments: numbers as doubles, anything else as strings. */
export function assignments(map: unknown, where: string, problem: (m: string) => void): Assignment[] {
  if (map === undefined || map === null) return [];
  if (typeof map !== 'object' || Array.isArray(map)) {
    problem(`${where}: structured_properties must be a mapping of property to value or list of values`);
    return [];
  }
  return Object.entries(map as Record<string, unknown>).map(([key, v]) => ({
    propertyUrn: propertyUrn(key),
    values: (Array.isArray(v) ? v : [v]).flatMap((x): Value[] => {
      if (typeof x === 'number') return [{ double: x }];
      if (typeof x === 'string' || typeof x === 'boolean') return [{ string: String(x) }];
      problem(`${where}: ${key} must be a value (a number or a string) or a list of values, got ${x === null ? 'nothing' : Array.isArray(x) ? 'a list in a list' : 'a mapping'}`);
      return [];
    }),
  }));
}

/**
 * The datasets of a file; a usage error listing every problem with its line. Warnings (a field's
 * description or type that has no Avro field to amend) go to `warn`.
 */
export function readDatasetFile(path: string, warn: (line: string) => void): DatasetSpec[] {
  const { contents, lineOf, lineAt, unknownKeys } = readYamlFile(path);
  const items = isSeq(contents) ? contents.items : isMap(contents) ? [contents] : undefined;
  if (!items) throw new CliError(`${path}:1: expected a dataset (id, platform, …) or a list of them`, 2);
  const problems: string[] = [];
  const specs = items.map((item, i) => {
    const at = `${path}:${lineOf(item)}`;
    if (!isMap(item)) {
      problems.push(`${at}: dataset ${i + 1} must be a mapping of keys (id, platform, …)`);
      return undefined;
    }
    unknownKeys(item as YAMLMap, KEYS, `dataset ${i + 1}`, problems);
    const schemaNode = (item as YAMLMap).get('schema', true);
    if (isMap(schemaNode)) unknownKeys(schemaNode as YAMLMap, SCHEMA_KEYS, `schema of dataset ${i + 1}`, problems);
    const fieldsNode = isMap(schemaNode) ? (schemaNode as YAMLMap).get('fields', true) : undefined;
    if (isSeq(fieldsNode)) fieldsNode.items.forEach((f, j) => isMap(f) && unknownKeys(f as YAMLMap, FIELD_KEYS, `field ${j + 1} of dataset ${i + 1}`, problems));
    const d = (item as YAMLMap).toJSON() as Record<string, any>;
    // A problem at the key (and list index) `where` names, or at the dataset's first line.
    const problem = (m: string, ...where: (string | number)[]) => problems.push(`${path}:${lineAt(item, ...where)}: ${m}`);
    let urn: string;
    let platform: string;
    let env: string;
    if (d.urn !== undefined) {
      urn = String(d.urn);
      const m = /^urn:li:dataset:\((urn:li:dataPlatform:[^,]+),.*,([^,)]+)\)$/.exec(urn);
      if (!m) {
        problem(`dataset ${i + 1}: ${urn} is not a dataset URN (urn:li:dataset:(urn:li:dataPlatform:<platform>,<name>,<env>))`, 'urn');
        return undefined;
      }
      [platform, env] = [m[1]!, m[2]!];
    } else if (d.id !== undefined && d.platform !== undefined) {
      platform = String(d.platform).startsWith('urn:li:dataPlatform:') ? String(d.platform) : `urn:li:dataPlatform:${d.platform}`;
      env = String(d.env ?? 'PROD');
      urn = `urn:li:dataset:(${platform},${d.id},${env})`;
    } else {
      problem(`dataset ${i + 1}: give id and platform (and env, PROD by default), or urn`);
      return undefined;
    }
    const aspects: DatasetSpec['aspects'] = {
      datasetProperties: {
        value: {
          name: String(d.name ?? d.id ?? urn),
          ...(d.description !== undefined ? { description: String(d.description) } : {}),
          ...(isObject(d.properties) ? { customProperties: Object.fromEntries(Object.entries(d.properties).map(([k, v]) => [k, String(v)])) } : {}),
        },
      },
    };
    if (present(d.properties) && !isObject(d.properties)) problem(`dataset ${i + 1}: properties must be a mapping of names to values`, 'properties');
    if (present(d.subtypes) && !Array.isArray(d.subtypes)) problem(`dataset ${i + 1}: subtypes must be a list (or give one as subtype)`, 'subtypes');
    const subtypes = Array.isArray(d.subtypes) ? d.subtypes : d.subtype !== undefined ? [d.subtype] : undefined;
    if (subtypes !== undefined) aspects.subTypes = { value: { typeNames: (subtypes as unknown[]).map(String) } };
    if (d.structured_properties !== undefined) aspects.structuredProperties = { value: { properties: assignments(d.structured_properties, `dataset ${i + 1}`, (m) => problem(m, 'structured_properties')) } };
    if (present(d.schema) && !isObject(d.schema)) problem(`dataset ${i + 1}: schema must be a mapping (file, fields)`, 'schema');
    const listed: unknown = d.schema?.fields;
    if (present(listed) && !Array.isArray(listed)) problem(`dataset ${i + 1}: schema.fields must be a list of fields (- id: …)`, 'schema', 'fields');
    // Each entry keeps its index (a problem names the entry's line); one that is not a mapping counts as empty.
    const givenFields = (Array.isArray(listed) ? listed : []).map((f: unknown, j): Record<string, unknown> => {
      if (!isObject(f)) problem(`field ${j + 1} of dataset ${i + 1} must be a mapping of keys (id, structured_properties, …)`, 'schema', 'fields', j);
      else if (f.id === undefined && f.urn === undefined) problem(`field ${j + 1} of dataset ${i + 1}: id or urn is required`, 'schema', 'fields', j);
      return isObject(f) ? f : {};
    });
    const schema = d.schema?.file === undefined ? undefined : schemaMetadata(String(d.schema.file), path, platform, givenFields, (m) => problem(m, 'schema', 'file'));
    if (schema) aspects.schemaMetadata = { value: schema };
    // A field's description and type amend the Avro file's field; with no such field they are not written.
    givenFields.forEach((f, j) => {
      const amends = ['description', 'type'].filter((k) => f[k] !== undefined);
      if (!amends.length || (f.id === undefined && f.urn === undefined)) return;
      const why = d.schema?.file === undefined ? 'there is no schema.file to amend' : schema && !schema.fields.some((s) => s.fieldPath === String(f.id)) ? `schema.file ${d.schema.file} has no field ${f.id ?? f.urn}` : undefined;
      if (why) warn(`${path}:${amends.map((k) => lineAt(item, 'schema', 'fields', j, k)).reduce((a, b) => Math.min(a, b))}: field ${f.id ?? f.urn} of dataset ${i + 1}: ${amends.join(' and ')} not written: ${why}`);
    });
    let downstreams: string[] = [];
    if (d.downstreams !== undefined) {
      if (!Array.isArray(d.downstreams)) problem(`dataset ${i + 1}: downstreams must be a list of dataset URNs or names`, 'downstreams');
      else {
        downstreams = (d.downstreams as unknown[]).map((x) => (String(x).startsWith('urn:li:dataset:') ? String(x) : `urn:li:dataset:(${platform},${x},${env})`));
        // Checked here, before anything of the file is written (the server refused it after the dataset's own aspects).
        downstreams.forEach((u, j) => {
          try {
            entityUrn(u);
          } catch (err) {
            problem(`dataset ${i + 1}: downstreams[${j}] ${u} is not a dataset URN: ${(err as Error).message}`, 'downstreams', j);
          }
        });
      }
    }
    const fields = givenFields.flatMap((f, j) => {
      if (f.structured_properties === undefined) return [];
      const fieldUrn = f.urn !== undefined ? String(f.urn) : `urn:li:schemaField:(${urn},${f.id})`;
      return [{ urn: fieldUrn, properties: assignments(f.structured_properties, `field ${f.id ?? f.urn} of dataset ${i + 1}`, (m) => problem(m, 'schema', 'fields', j, 'structured_properties')) }];
    });
    return { urn, aspects, fields, downstreams };
  });
  if (problems.length) throw new CliError(problems.join('\n'), 2);
  return specs.filter((x): x is DatasetSpec => x !== undefined);
}
