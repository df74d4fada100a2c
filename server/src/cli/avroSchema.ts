/**
 * A dataset file's `schema.file`: an Avro schema (`.avsc`), checked by `avsc`, as a `schemaMetadata`
 * aspect. Each field of the record, and of the records nested in it, becomes a field with a dotted path
 * (`address.city`: the simple form that `schema.fields[].id` and schemaField URNs use), DataHub's field
 * type, the Avro type as native type, `nullable` for a union with null, and the Avro `doc`.
 */
import avro from 'avsc';

/** DataHub's SchemaFieldDataType of an Avro type name (after logical types and nullable unions). */
const DATA_TYPES: Record<string, string> = {
  string: 'StringType',
  boolean: 'BooleanType',
  int: 'NumberType',
  long: 'NumberType',
  float: 'NumberType',
  double: 'NumberType',
  bytes: 'BytesType',
  fixed: 'FixedType',
  enum: 'EnumType',
  array: 'ArrayType',
  map: 'MapType',
  record: 'RecordType',
  null: 'NullType',
  union: 'UnionType',
  date: 'DateType',
  'timestamp-millis': 'TimeType',
  'timestamp-micros': 'TimeType',
  'time-millis': 'TimeType',
  'time-micros': 'TimeType',
  decimal: 'NumberType',
  uuid: 'StringType',
};

export interface SchemaField {
  fieldPath: string;
  type: { type: Record<string, Record<string, never>> };
  nativeDataType: string;
  nullable: boolean;
  description?: string;
}

/** A logical type kept as its underlying values: enough for avsc to name it (`logical:<name>`). */
class Logical extends avro.types.LogicalType {
  override _fromValue(v: unknown) {
    return v;
  }
  override _toValue(v: unknown) {
    return v;
  }
}
const LOGICAL_TYPES = Object.fromEntries(['date', 'time-millis', 'time-micros', 'timestamp-millis', 'timestamp-micros', 'decimal', 'uuid'].map((n) => [n, Logical]));

type AvroField = { name: string; type: avro.Type; doc?: string };
type AvroType = avro.Type & { fields?: AvroField[]; types?: avro.Type[]; underlyingType?: avro.Type; itemsType?: avro.Type; valuesType?: avro.Type };

/** The Avro type's name as DataHub shows it (`string`, `record`, `timestamp-millis`, …). */
function kind(t: AvroType): string {
  const name = t.typeName;
  if (name.startsWith('logical:')) return name.slice('logical:'.length);
  if (name.startsWith('union:')) return 'union';
  return name;
}

/** A nullable union (`["null", X]`) as X; anything else as itself. */
function unwrapNullable(t: AvroType): { type: AvroType; nullable: boolean } {
  if (kind(t) !== 'union') return { type: t, nullable: false };
  const others = (t.types ?? []).filter((b) => b.typeName !== 'null') as AvroType[];
  const nullable = others.length < (t.types ?? []).length;
  return others.length === 1 ? { type: others[0]!, nullable } : { type: t, nullable };
}

function native(t: AvroType): string {
  const k = kind(t);
  if (k === 'array') return `array<${native(unwrapNullable(t.itemsType as AvroType).type)}>`;
  if (k === 'map') return `map<string,${native(unwrapNullable(t.valuesType as AvroType).type)}>`;
  if (k === 'union') return `union<${(t.types ?? []).map((b) => native(b as AvroType)).join(',')}>`;
  if (k === 'record' || k === 'enum' || k === 'fixed') return t.name ?? k;
  return k;
}

/**
 * The fields of an Avro record schema (the text of a `.avsc` file), flattened into dotted paths.
 * Throws with avsc's message when the text is not a valid Avro schema, or the schema is not a record.
 */
export function avroFields(text: string): { name: string; fields: SchemaField[] } {
  const type = avro.Type.forSchema(JSON.parse(text) as avro.Schema, { logicalTypes: LOGICAL_TYPES }) as AvroType;
  if (kind(type) !== 'record') throw new Error(`the schema is a ${kind(type)}, not a record`);
  const fields: SchemaField[] = [];
  const walk = (record: AvroType, prefix: string, seen: Set<string>) => {
    for (const f of record.fields ?? []) {
      const { type: t, nullable } = unwrapNullable(f.type as AvroType);
      const path = `${prefix}${f.name}`;
      const dataType = DATA_TYPES[kind(t)] ?? 'NullType';
      fields.push({ fieldPath: path, type: { type: { [`com.linkedin.schema.${dataType}`]: {} } }, nativeDataType: native(t), nullable, ...(f.doc !== undefined ? { description: f.doc } : {}) });
      // Nested records are fields too; a recursive type is not followed into itself.
      if (kind(t) === 'record' && !seen.has(t.name ?? '')) walk(t, `${path}.`, new Set([...seen, t.name ?? '']));
    }
  };
  walk(type, '', new Set([type.name ?? '']));
  return { name: type.name ?? 'record', fields };
}
