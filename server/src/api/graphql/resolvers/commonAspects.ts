/**
 * The fields DataHub's GraphQL API gives entities from their common aspects, under its names:
 * `properties` (each type's own info aspect), `editableProperties`, `ownership`, `tags` (and its older
 * name `globalTags`), `glossaryTerms`, `domain`, `status`, `deprecation`, `institutionalMemory`,
 * `container`, `subTypes`, `dataPlatformInstance`, `browsePathV2`, and a dataset's `schemaMetadata`
 * (the other types' own fields: modelAspects.ts). Each reads one aspect
 * through the request's entity loader and answers null when the entity does not have it. The shared
 * ones (all but `properties`, `editableProperties` and `schemaMetadata`) are also fields of every other
 * entity type of the model that has their aspect (ML models, glossary nodes, data products, …).
 */
import { SvcError } from '../../../shared/errors.ts';
import { registry, type EntitySpec } from '../../../registry/registry.ts';
import { aspectOf, entityRef, then, type EntityRef, type GraphQLContext } from '../context.ts';
import { graphqlNames } from '../entityTypes.ts';

export type Obj = Record<string, unknown>;
export type FieldResolver = (ref: EntityRef, _: unknown, ctx: GraphQLContext) => unknown;

export const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
export const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Obj[]) : []);

/** A resolver of one aspect's value, mapped; null when the entity has no such aspect. */
export function fromAspect(aspect: string, map: (value: Obj, ref: EntityRef) => unknown): FieldResolver {
  return (ref, _, ctx) => then(aspectOf<Obj>(ctx, ref.urn, aspect), (v) => (v ? map(v, ref) : null));
}

export function customProperties(value: Obj, urn: string) {
  const entries = value.customProperties && typeof value.customProperties === 'object' ? Object.entries(value.customProperties as Obj) : [];
  return entries.map(([key, v]) => ({ key, value: text(v), associatedUrn: urn }));
}

/** An audit stamp (`time`, `actor`) as GraphQL's AuditStamp; null for anything else. */
export function auditStamp(v: unknown): { time: number; actor: string | null } | null {
  if (!v || typeof v !== 'object' || typeof (v as Obj).time !== 'number') return null;
  return { time: (v as Obj).time as number, actor: text((v as Obj).actor) };
}

/** A key field of the entity (the name an info aspect's `name` falls back to, as DataHub's does). */
export const keyName = (ref: EntityRef, field: string): string => String(registry.keyAspectValue(ref.target)[field] ?? ref.urn);

/** A resolver of a key field of the entity (a dataset's `name`, a job's `jobId`). */
export const keyField = (field: string) => (ref: EntityRef) => registry.keyAspectValue(ref.target)[field];
/** A resolver of the entity a key field names (a dataset's `platform`, a job's flow). */
export const keyEntity = (field: string) => (ref: EntityRef) => entityRef(String(registry.keyAspectValue(ref.target)[field]));

/** `properties` from an info aspect: `name` read from `nameField`, else the key's `keyField`. */
function properties(aspect: string, nameField: string, keyField: string, extra: (v: Obj) => Obj = () => ({})): FieldResolver {
  return fromAspect(aspect, (v, ref) => ({
    name: text(v[nameField]) ?? keyName(ref, keyField),
    description: text(v.description),
    customProperties: customProperties(v, ref.urn),
    externalUrl: text(v.externalUrl),
    ...extra(v),
  }));
}

/** `editableProperties`: the description written in DataHub's UI. */
export const editable = (aspect: string): FieldResolver => fromAspect(aspect, (v) => ({ description: text(v.description) }));

/** A globalTags value (an entity's aspect, or a schema field's) as GraphQL's GlobalTags. */
export const globalTags = (v: Obj, urn: string) => ({ tags: list(v.tags).map((t) => ({ tag: entityRef(String(t.tag)), context: text(t.context), associatedUrn: urn })) });
/** A glossaryTerms value (an entity's aspect, or a schema field's) as GraphQL's GlossaryTerms. */
export const glossaryTerms = (v: Obj, urn: string) => ({ terms: list(v.terms).map((t) => ({ term: entityRef(String(t.urn)), context: text(t.context), associatedUrn: urn })) });
const tags = fromAspect('globalTags', (v, ref) => globalTags(v, ref.urn));

/** The entity a URN names; null for a value that is not the URN of an entity type svc knows. */
export function knownEntity(urn: unknown): EntityRef | null {
  if (typeof urn !== 'string') return null;
  try {
    return entityRef(urn);
  } catch {
    return null;
  }
}

/** The fields every entity type with these aspects shows, the same way. */
const shared = {
  ownership: fromAspect('ownership', (v, ref) => ({
    owners: list(v.owners).map((o) => ({
      owner: entityRef(String(o.owner)),
      type: text(o.type),
      ownershipType: typeof o.typeUrn === 'string' ? entityRef(o.typeUrn) : null,
      associatedUrn: ref.urn,
    })),
  })),
  tags,
  globalTags: tags,
  glossaryTerms: fromAspect('glossaryTerms', (v, ref) => glossaryTerms(v, ref.urn)),
  domain: fromAspect('domains', (v, ref) => {
    const first = Array.isArray(v.domains) ? v.domains.find((d) => typeof d === 'string') : undefined;
    return first ? { domain: entityRef(first), associatedUrn: ref.urn } : null;
  }),
  status: fromAspect('status', (v) => ({ removed: v.removed === true })),
  deprecation: fromAspect('deprecation', (v) => ({
    deprecated: v.deprecated === true,
    decommissionTime: typeof v.decommissionTime === 'number' ? v.decommissionTime : null,
    note: text(v.note),
    actor: text(v.actor),
    replacement: knownEntity(v.replacement),
  })),
  /** DataHub's links: each element's description is also its `label`; who made it, its `actor` (a user or a group). */
  institutionalMemory: fromAspect('institutionalMemory', (v, ref) => ({
    elements: list(v.elements).map((e) => {
      const created = auditStamp(e.createStamp);
      const actor = knownEntity(created?.actor);
      return {
        url: text(e.url) ?? '',
        label: text(e.description) ?? '',
        description: text(e.description) ?? '',
        created,
        actor: actor && ['corpuser', 'corpGroup'].includes(actor.target.spec.name) ? actor : null,
        associatedUrn: ref.urn,
      };
    }),
  })),
  subTypes: fromAspect('subTypes', (v) => ({ typeNames: Array.isArray(v.typeNames) ? v.typeNames : [] })),
  dataPlatformInstance: fromAspect('dataPlatformInstance', (v) => (typeof v.instance === 'string' ? entityRef(v.instance) : null)),
  /**
   * Each entry's `id` is its name; a container's entry (or another entity's) names it by `urn`, any URN
   * the aspect took: one of an entity type svc does not know shows no entity, not an error.
   */
  browsePathV2: fromAspect('browsePathsV2', (v) => ({ path: list(v.path).map((e) => ({ name: text(e.id) ?? '', entity: knownEntity(e.urn) })) })),
};

/** GraphQL's `SchemaFieldDataType` of each member of the aspect's type union (Pegasus class names; the validator admits no other). */
const FIELD_TYPES = new Map(
  Object.entries({
    BooleanType: 'BOOLEAN', FixedType: 'FIXED', StringType: 'STRING', BytesType: 'BYTES', NumberType: 'NUMBER', DateType: 'DATE', TimeType: 'TIME',
    EnumType: 'ENUM', NullType: 'NULL', MapType: 'MAP', ArrayType: 'ARRAY', UnionType: 'UNION', RecordType: 'STRUCT',
  }),
);

function fieldType(type: unknown): string {
  const member = type && typeof type === 'object' ? Object.keys((type as Obj).type ?? {})[0] : undefined;
  const name = FIELD_TYPES.get(member?.slice(member.lastIndexOf('.') + 1) ?? '');
  if (!name) throw new Error(`schemaMetadata: a field type ${String(member)} the model does not have`);
  return name;
}

function schemaMetadata(value: Obj, ref: EntityRef) {
  return {
    name: text(value.schemaName) ?? '',
    platformUrn: text(value.platform) ?? '',
    version: typeof value.version === 'number' ? value.version : 0,
    hash: text(value.hash) ?? '',
    datasetUrn: ref.urn,
    primaryKeys: Array.isArray(value.primaryKeys) ? value.primaryKeys : null,
    fields: list(value.fields).map((f) => ({
      fieldPath: String(f.fieldPath),
      jsonPath: text(f.jsonPath),
      label: text(f.label),
      nullable: f.nullable === true,
      description: text(f.description),
      type: fieldType(f.type),
      nativeDataType: text(f.nativeDataType),
      recursive: f.recursive === true,
      isPartOfKey: f.isPartOfKey === true,
      isPartitioningKey: f.isPartitioningKey === true,
      jsonProps: text(f.jsonProps),
      globalTags: f.globalTags ? globalTags(f.globalTags as Obj, ref.urn) : null,
      glossaryTerms: f.glossaryTerms ? glossaryTerms(f.glossaryTerms as Obj, ref.urn) : null,
    })),
  };
}

/** A dataset's `schemaMetadata(version)`: the latest (no version, or 0, as DataHub numbers them) from the loader, another version read apart. */
function datasetSchema(ref: EntityRef, { version }: { version?: number | null }, ctx: GraphQLContext): unknown {
  if (!version) return fromAspect('schemaMetadata', schemaMetadata)(ref, undefined, ctx);
  if (!Number.isSafeInteger(version) || version < 0) throw SvcError.validation([`schemaMetadata: version must be 0 (the latest) or a version number, got ${version}`]);
  return ctx.catalog.entities.getAspect(ctx.principal, ref.target, 'schemaMetadata', version).then((stored) => (stored ? schemaMetadata(stored.value as Obj, ref) : null));
}

const container = fromAspect('container', (v) => (typeof v.container === 'string' ? entityRef(v.container) : null));

/** The common fields of each entity type that has them, by GraphQL type name. */
export const commonAspectFields = {
  Dataset: {
    ...shared,
    properties: properties('datasetProperties', 'name', 'name', (v) => ({ qualifiedName: text(v.qualifiedName) })),
    editableProperties: editable('editableDatasetProperties'),
    container,
    schemaMetadata: datasetSchema,
  },
  DataFlow: {
    ...shared,
    properties: properties('dataFlowInfo', 'name', 'flowId', (v) => ({ project: text(v.project) })),
    editableProperties: editable('editableDataFlowProperties'),
  },
  DataJob: { ...shared, properties: properties('dataJobInfo', 'name', 'jobId'), editableProperties: editable('editableDataJobProperties') },
  Chart: { ...shared, properties: properties('chartInfo', 'title', 'chartId'), editableProperties: editable('editableChartProperties'), container },
  Dashboard: { ...shared, properties: properties('dashboardInfo', 'title', 'dashboardId'), editableProperties: editable('editableDashboardProperties'), container },
  Container: {
    ...shared,
    properties: properties('containerProperties', 'name', 'guid', (v) => ({ qualifiedName: text(v.qualifiedName) })),
    editableProperties: editable('editableContainerProperties'),
    container,
  },
  Domain: { properties: fromAspect('domainProperties', (v, ref) => ({ name: text(v.name) ?? keyName(ref, 'id'), description: text(v.description) })) },
  GlossaryTerm: {
    properties: fromAspect('glossaryTermInfo', (v, ref) => ({
      name: text(v.name) ?? keyName(ref, 'name'),
      definition: text(v.definition) ?? '',
      description: text(v.definition),
      termSource: text(v.termSource) ?? 'INTERNAL',
    })),
  },
  Tag: { properties: fromAspect('tagProperties', (v, ref) => ({ name: text(v.name) ?? keyName(ref, 'name'), description: text(v.description), colorHex: text(v.colorHex) })) },
};

/**
 * The aspect each shared field reads and its SDL: an entity type has the field when it has the aspect
 * (the six types of {@link COMMON_FIELD_TYPES} have them all).
 */
const SHARED_FIELDS: Record<keyof typeof shared | 'container', { aspect: string; sdl: string }> = {
  ownership: { aspect: 'ownership', sdl: 'ownership: Ownership' },
  tags: { aspect: 'globalTags', sdl: 'tags: GlobalTags' },
  glossaryTerms: { aspect: 'glossaryTerms', sdl: 'glossaryTerms: GlossaryTerms' },
  domain: { aspect: 'domains', sdl: 'domain: DomainAssociation' },
  status: { aspect: 'status', sdl: 'status: Status' },
  deprecation: { aspect: 'deprecation', sdl: 'deprecation: Deprecation' },
  institutionalMemory: { aspect: 'institutionalMemory', sdl: '"Its links (its institutionalMemory aspect)."\n  institutionalMemory: InstitutionalMemory' },
  subTypes: { aspect: 'subTypes', sdl: 'subTypes: SubTypes' },
  dataPlatformInstance: { aspect: 'dataPlatformInstance', sdl: '"The platform instance of its dataPlatformInstance aspect."\n  dataPlatformInstance: DataPlatformInstance' },
  globalTags: { aspect: 'globalTags', sdl: '"Its tags (the name DataHub\'s older queries use for tags)."\n  globalTags: GlobalTags' },
  browsePathV2: { aspect: 'browsePathsV2', sdl: '"Where it is browsed to (its browsePathsV2 aspect)."\n  browsePathV2: BrowsePathV2' },
  container: { aspect: 'container', sdl: '"The container the entity is in (its container aspect)."\n  container: Container' },
};

type SharedField = keyof typeof SHARED_FIELDS;
const SHARED_NAMES = Object.keys(SHARED_FIELDS) as SharedField[];
const sharedResolvers: Record<SharedField, FieldResolver> = { ...shared, container };

/** Where DataHub gives a type a field of a shared name from another aspect (modelFields.graphql): a user's `status` is its CorpUserStatus. */
const OWN_FIELDS: Record<string, SharedField[]> = { corpuser: ['status'] };

/** The shared fields an entity type of the model has: those of the aspects it has. */
const sharedFieldsOf = (spec: EntitySpec) =>
  SHARED_NAMES.filter((f) => spec.aspects.includes(SHARED_FIELDS[f].aspect) && !OWN_FIELDS[spec.name]?.includes(f));

/** Per entity type: its `properties` type, its `editableProperties` type, and whether it is in a container. */
const COMMON_FIELD_TYPES: [string, string, string, boolean][] = [
  ['Dataset', 'DatasetProperties', 'DatasetEditableProperties', true],
  ['DataFlow', 'DataFlowProperties', 'DataFlowEditableProperties', false],
  ['DataJob', 'DataJobProperties', 'DataJobEditableProperties', false],
  ['Chart', 'ChartProperties', 'ChartEditableProperties', true],
  ['Dashboard', 'DashboardProperties', 'DashboardEditableProperties', true],
  ['Container', 'ContainerProperties', 'ContainerEditableProperties', true],
];

/** The entity types other than those of {@link COMMON_FIELD_TYPES}, by GraphQL type name, with the shared fields they have. */
const OTHER_TYPES: [string, SharedField[]][] = registry.entities
  .map((spec): [string, SharedField[]] => [graphqlNames(spec).type, sharedFieldsOf(spec)])
  .filter(([type, fields]) => fields.length > 0 && !COMMON_FIELD_TYPES.some(([t]) => t === type));

/** The SDL of these fields, added to the six types above and to every other entity type that has their aspects. */
export const COMMON_FIELD_DEFS =
  COMMON_FIELD_TYPES.map(
    ([type, properties, editable, inContainer]) => `
extend type ${type} {
  "What the entity's own properties aspect says; null without it."
  properties: ${properties}
  "The description written in DataHub's UI (its editable properties aspect)."
  editableProperties: ${editable}
  ${SHARED_NAMES.filter((f) => inContainer || f !== 'container').map((f) => SHARED_FIELDS[f].sdl).join('\n  ')}
}
`,
  ).join('') +
  OTHER_TYPES
    .map(([type, fields]) => `\nextend type ${type} {\n  ${fields.map((f) => SHARED_FIELDS[f].sdl).join('\n  ')}\n}\n`)
    .join('');

/** The resolvers of the shared fields of every other entity type, by GraphQL type name. */
export const otherTypeFields: Record<string, Record<string, FieldResolver>> = Object.fromEntries(
  OTHER_TYPES.map(([type, fields]) => [type, Object.fromEntries(fields.map((f) => [f, sharedResolvers[f]]))]),
);

/** The aspects each of these fields reads, for a search to read its entities with. */
export const COMMON_FIELD_ASPECTS: Record<string, string[]> = {
  properties: ['datasetProperties', 'dataFlowInfo', 'dataJobInfo', 'chartInfo', 'dashboardInfo', 'containerProperties', 'domainProperties', 'glossaryTermInfo', 'tagProperties'],
  editableProperties: ['editableDatasetProperties', 'editableDataFlowProperties', 'editableDataJobProperties', 'editableChartProperties', 'editableDashboardProperties', 'editableContainerProperties'],
  ownership: ['ownership'],
  tags: ['globalTags'],
  glossaryTerms: ['glossaryTerms'],
  domain: ['domains'],
  status: ['status', 'corpUserStatus'],
  deprecation: ['deprecation'],
  institutionalMemory: ['institutionalMemory'],
  container: ['container'],
  subTypes: ['subTypes'],
  dataPlatformInstance: ['dataPlatformInstance'],
  globalTags: ['globalTags'],
  browsePathV2: ['browsePathsV2'],
  schemaMetadata: ['schemaMetadata'],
};
