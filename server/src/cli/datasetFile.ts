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
 *       fields:
 *         - id: customer_id
 *           structured_properties: {io.acryl.dataManagement.deprecationDate: "2023-01-01"}
 */
import { isMap, isSeq, type YAMLMap } from 'yaml';
import { CliError } from './errors.ts';
import { propertyUrn } from './propertyFile.ts';
import { readYamlFile } from './yamlFile.ts';

const KEYS = ['id', 'platform', 'env', 'urn', 'name', 'description', 'properties', 'subtype', 'subtypes', 'schema', 'structured_properties', 'downstreams'];
const FIELD_KEYS = ['id', 'urn', 'type', 'description', 'structured_properties'];

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
}

/** `{fqn: value or list}` as assignments: numbers as doubles, anything else as strings. */
export function assignments(map: unknown, where: string, problem: (m: string) => void): Assignment[] {
  if (map === undefined || map === null) return [];
  if (typeof map !== 'object' || Array.isArray(map)) {
    problem(`${where}: structured_properties must be a mapping of property to value or list of values`);
    return [];
  }
  return Object.entries(map as Record<string, unknown>).map(([key, v]) => ({
    propertyUrn: propertyUrn(key),
    values: (Array.isArray(v) ? v : [v]).map((x): Value => (typeof x === 'number' ? { double: x } : { string: String(x) })),
  }));
}

export function readDatasetFile(path: string): DatasetSpec[] {
  const { contents, lineOf, unknownKeys } = readYamlFile(path);
  const items = isSeq(contents) ? contents.items : isMap(contents) ? [contents] : undefined;
  if (!items) throw new CliError(`${path}:1: expected a dataset (id, platform, …) or a list of them`, 2);
  const problems: string[] = [];
  const specs = items.map((item, i) => {
    const at = `${path}:${lineOf(item)}`;
    if (!isMap(item)) {
      problems.push(`${at}: dataset ${i + 1} must be a mapping of keys (id, platform, …)`);
      return undefined;
    }
    problems.push(...unknownKeys(item as YAMLMap, KEYS, `dataset ${i + 1}`));
    const schemaNode = (item as YAMLMap).get('schema', true);
    const fieldsNode = isMap(schemaNode) ? (schemaNode as YAMLMap).get('fields', true) : undefined;
    if (isSeq(fieldsNode)) fieldsNode.items.forEach((f, j) => isMap(f) && problems.push(...unknownKeys(f as YAMLMap, FIELD_KEYS, `field ${j + 1} of dataset ${i + 1}`)));
    const d = (item as YAMLMap).toJSON() as Record<string, any>;
    const problem = (m: string) => problems.push(`${at}: ${m}`);
    let urn: string;
    if (d.urn !== undefined) urn = String(d.urn);
    else if (d.id !== undefined && d.platform !== undefined) {
      const platform = String(d.platform).startsWith('urn:li:dataPlatform:') ? String(d.platform) : `urn:li:dataPlatform:${d.platform}`;
      urn = `urn:li:dataset:(${platform},${d.id},${d.env ?? 'PROD'})`;
    } else {
      problem(`dataset ${i + 1}: give id and platform (and env, PROD by default), or urn`);
      return undefined;
    }
    const aspects: DatasetSpec['aspects'] = {
      datasetProperties: {
        value: {
          name: String(d.name ?? d.id ?? urn),
          ...(d.description !== undefined ? { description: String(d.description) } : {}),
          ...(d.properties !== undefined ? { customProperties: Object.fromEntries(Object.entries(d.properties as object).map(([k, v]) => [k, String(v)])) } : {}),
        },
      },
    };
    const subtypes = d.subtypes ?? (d.subtype !== undefined ? [d.subtype] : undefined);
    if (subtypes !== undefined) aspects.subTypes = { value: { typeNames: (subtypes as unknown[]).map(String) } };
    if (d.structured_properties !== undefined) aspects.structuredProperties = { value: { properties: assignments(d.structured_properties, `dataset ${i + 1}`, problem) } };
    const fields = ((d.schema?.fields ?? []) as Record<string, unknown>[])
      .filter((f) => f.structured_properties !== undefined)
      .map((f) => {
        const fieldUrn = f.urn !== undefined ? String(f.urn) : `urn:li:schemaField:(${urn},${f.id})`;
        return { urn: fieldUrn, properties: assignments(f.structured_properties, `field ${f.id ?? f.urn} of dataset ${i + 1}`, problem) };
      });
    return { urn, aspects, fields };
  });
  if (problems.length) throw new CliError(problems.join('\n'), 2);
  return specs.filter((x): x is DatasetSpec => x !== undefined);
}
