/**
 * The fields DataHub's GraphQL API gives entities from their common aspects, under its names:
 * `properties` (each type's own info aspect), `editableProperties`, `ownership`, `tags`,
 * `glossaryTerms`, `domain`, `status`, `container`, `subTypes` and `dataPlatformInstance`. Each reads
 * one aspect through the request's entity loader and answers null when the entity does not have it.
 */
import { registry } from '../../../registry/registry.ts';
import { aspectOf, entityRef, then, type EntityRef, type GraphQLContext } from '../context.ts';

type Obj = Record<string, unknown>;
type FieldResolver = (ref: EntityRef, _: unknown, ctx: GraphQLContext) => unknown;

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Obj[]) : []);

/** A resolver of one aspect's value, mapped; null when the entity has no such aspect. */
function fromAspect(aspect: string, map: (value: Obj, ref: EntityRef) => unknown): FieldResolver {
  return (ref, _, ctx) => then(aspectOf<Obj>(ctx, ref.urn, aspect), (v) => (v ? map(v, ref) : null));
}

function customProperties(value: Obj, urn: string) {
  const entries = value.customProperties && typeof value.customProperties === 'object' ? Object.entries(value.customProperties as Obj) : [];
  return entries.map(([key, v]) => ({ key, value: text(v), associatedUrn: urn }));
}

/** A key field of the entity (the name an info aspect's `name` falls back to, as DataHub's does). */
const keyName = (ref: EntityRef, field: string): string => String(registry.keyAspectValue(ref.target)[field] ?? ref.urn);

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

const editable = (aspect: string): FieldResolver => fromAspect(aspect, (v) => ({ description: text(v.description) }));

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
  tags: fromAspect('globalTags', (v, ref) => ({ tags: list(v.tags).map((t) => ({ tag: entityRef(String(t.tag)), context: text(t.context), associatedUrn: ref.urn })) })),
  glossaryTerms: fromAspect('glossaryTerms', (v, ref) => ({ terms: list(v.terms).map((t) => ({ term: entityRef(String(t.urn)), context: text(t.context), associatedUrn: ref.urn })) })),
  domain: fromAspect('domains', (v, ref) => {
    const first = Array.isArray(v.domains) ? v.domains.find((d) => typeof d === 'string') : undefined;
    return first ? { domain: entityRef(first), associatedUrn: ref.urn } : null;
  }),
  status: fromAspect('status', (v) => ({ removed: v.removed === true })),
  subTypes: fromAspect('subTypes', (v) => ({ typeNames: Array.isArray(v.typeNames) ? v.typeNames : [] })),
  dataPlatformInstance: fromAspect('dataPlatformInstance', (v) => (typeof v.instance === 'string' ? entityRef(v.instance) : null)),
};

const container = fromAspect('container', (v) => (typeof v.container === 'string' ? entityRef(v.container) : null));

/** The common fields of each entity type that has them, by GraphQL type name. */
export const commonAspectFields = {
  Dataset: {
    ...shared,
    properties: properties('datasetProperties', 'name', 'name', (v) => ({ qualifiedName: text(v.qualifiedName) })),
    editableProperties: editable('editableDatasetProperties'),
    container,
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

/** Per entity type: its `properties` type, its `editableProperties` type, and whether it is in a container. */
const COMMON_FIELD_TYPES: [string, string, string, boolean][] = [
  ['Dataset', 'DatasetProperties', 'DatasetEditableProperties', true],
  ['DataFlow', 'DataFlowProperties', 'DataFlowEditableProperties', false],
  ['DataJob', 'DataJobProperties', 'DataJobEditableProperties', false],
  ['Chart', 'ChartProperties', 'ChartEditableProperties', true],
  ['Dashboard', 'DashboardProperties', 'DashboardEditableProperties', true],
  ['Container', 'ContainerProperties', 'ContainerEditableProperties', true],
];

/** The SDL of these fields, added to the types schema.graphql declares. */
export const COMMON_FIELD_DEFS = COMMON_FIELD_TYPES.map(
  ([type, properties, editable, inContainer]) => `
extend type ${type} {
  "What the entity's own properties aspect says; null without it."
  properties: ${properties}
  "The description written in DataHub's UI (its editable properties aspect)."
  editableProperties: ${editable}
  ownership: Ownership
  tags: GlobalTags
  glossaryTerms: GlossaryTerms
  domain: DomainAssociation
  status: Status
  subTypes: SubTypes
  "The platform instance of its dataPlatformInstance aspect."
  dataPlatformInstance: DataPlatformInstance${inContainer ? '\n  "The container the entity is in (its container aspect)."\n  container: Container' : ''}
}
`,
).join('');

/** The aspects each of these fields reads, for a search to read its entities with. */
export const COMMON_FIELD_ASPECTS: Record<string, string[]> = {
  properties: ['datasetProperties', 'dataFlowInfo', 'dataJobInfo', 'chartInfo', 'dashboardInfo', 'containerProperties', 'domainProperties', 'glossaryTermInfo', 'tagProperties'],
  editableProperties: ['editableDatasetProperties', 'editableDataFlowProperties', 'editableDataJobProperties', 'editableChartProperties', 'editableDashboardProperties', 'editableContainerProperties'],
  ownership: ['ownership'],
  tags: ['globalTags'],
  glossaryTerms: ['glossaryTerms'],
  domain: ['domains'],
  status: ['status'],
  container: ['container'],
  subTypes: ['subTypes'],
  dataPlatformInstance: ['dataPlatformInstance'],
};
