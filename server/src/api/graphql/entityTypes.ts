/**
 * DataHub's `EntityType` enum and GraphQL type name of each registry entity: `dataset` ↔ `DATASET`
 * (type `Dataset`), `corpuser` ↔ `CORP_USER` (type `CorpUser`). The entity types schema.graphql
 * declares have their fields there; every other one of DataHub's model is declared here
 * ({@link ENTITY_TYPE_DEFS}) with the fields every entity has, and its structured properties.
 */
import { SvcError } from '../../shared/errors.ts';
import { registry, type EntitySpec } from '../../registry/registry.ts';

/** The entity types schema.graphql declares (their fields are there; {@link ENTITY_TYPE_DEFS} declares the others). */
const DECLARED: ReadonlySet<string> = new Set([
  'dataset', 'schemaField', 'dataFlow', 'dataJob', 'chart', 'dashboard', 'container', 'domain', 'glossaryTerm', 'tag', 'corpuser',
  'corpGroup', 'dataPlatform', 'dataPlatformInstance', 'structuredProperty', 'dataType', 'entityType', 'dataHubIngestionSource',
  'dataHubExecutionRequest', 'dataProcessInstance',
]);

/**
 * Where DataHub's GraphQL API names an entity type otherwise than the rule below (enumByClientRule, and
 * the entity name capitalised for the type): its users, schema fields, ML types and its own entities.
 */
const DATAHUB_NAMES: Record<string, { enum?: string; type?: string }> = {
  corpuser: { enum: 'CORP_USER', type: 'CorpUser' },
  schemaField: { type: 'SchemaFieldEntity' },
  structuredProperty: { type: 'StructuredPropertyEntity' },
  dataType: { type: 'DataTypeEntity' },
  dataHubIngestionSource: { type: 'IngestionSource' },
  dataHubExecutionRequest: { type: 'ExecutionRequest' },
  mlModel: { enum: 'MLMODEL', type: 'MLModel' },
  mlModelGroup: { enum: 'MLMODEL_GROUP', type: 'MLModelGroup' },
  mlFeature: { enum: 'MLFEATURE', type: 'MLFeature' },
  mlFeatureTable: { enum: 'MLFEATURE_TABLE', type: 'MLFeatureTable' },
  mlPrimaryKey: { enum: 'MLPRIMARY_KEY', type: 'MLPrimaryKey' },
  erModelRelationship: { enum: 'ER_MODEL_RELATIONSHIP', type: 'ERModelRelationship' },
  ownershipType: { enum: 'CUSTOM_OWNERSHIP_TYPE', type: 'OwnershipTypeEntity' },
  query: { enum: 'QUERY', type: 'QueryEntity' },
  dataHubView: { enum: 'DATAHUB_VIEW', type: 'DataHubView' },
  dataHubPolicy: { enum: 'DATAHUB_POLICY', type: 'DataHubPolicy' },
  dataHubRole: { enum: 'DATAHUB_ROLE', type: 'DataHubRole' },
  dataHubConnection: { enum: 'DATAHUB_CONNECTION', type: 'DataHubConnection' },
  dataHubAccessToken: { enum: 'ACCESS_TOKEN', type: 'AccessToken' },
};

/**
 * The `EntityType` value of an entity name as DataHub's Python client converts one
 * (`entity_type_to_graphql`: camel case to upper snake case, `DATA_HUB_` dropped), so that the
 * names its searches send are the enum's.
 */
function enumByClientRule(name: string): string {
  const upper = name.replace(/[A-Z]/g, (c) => `_${c}`).replace(/^_/, '').toUpperCase();
  return upper.startsWith('DATA_HUB_') ? upper.slice('DATA_HUB_'.length) : upper;
}

/** Type names the static schema uses for other things: an entity type's name takes `Entity` after it instead. */
const TAKEN = new Set(['Query', 'Mutation', 'Entity', 'Long', 'EntityType']);

/**
 * Every registry entity's names. The declared types take theirs first; a name another type has already
 * taken gets `DATAHUB_` before its enum value, `Entity` after its type name.
 */
const NAMES: Record<string, { enum: string; type: string }> = {};
{
  const enums = new Set<string>();
  const types = new Set(TAKEN);
  const declaredFirst = [...registry.entities].sort((a, b) => Number(DECLARED.has(b.name)) - Number(DECLARED.has(a.name)));
  for (const spec of declaredFirst) {
    const known = DATAHUB_NAMES[spec.name];
    let e = known?.enum ?? enumByClientRule(spec.name);
    if (enums.has(e)) e = `DATAHUB_${e}`;
    let t = known?.type ?? `${spec.name[0]!.toUpperCase()}${spec.name.slice(1)}`;
    if (types.has(t)) t = `${t}Entity`;
    if (enums.has(e) || types.has(t)) throw new Error(`GraphQL names of ${spec.name} (${e}, ${t}) are taken`);
    enums.add(e);
    types.add(t);
    NAMES[spec.name] = { enum: e, type: t };
  }
}

/**
 * The SDL of the entity types schema.graphql does not declare: their `EntityType` values and object
 * types (`urn`, `type`, `exists`, and `structuredProperties` where the entity has them).
 */
export const ENTITY_TYPE_DEFS = (() => {
  const extra = registry.entities.filter((spec) => !DECLARED.has(spec.name));
  const values = extra.map((spec) => `  ${NAMES[spec.name]!.enum}`).join('\n');
  const types = extra.map((spec) => {
    const properties = spec.aspects.includes('structuredProperties') ? '\n  structuredProperties: StructuredProperties' : '';
    return `"""A ${spec.name} entity of DataHub's model."""\ntype ${NAMES[spec.name]!.type} implements Entity {\n  urn: String!\n  type: EntityType!\n  exists: Boolean${properties}\n}`;
  });
  return `\nextend enum EntityType {\n${values}\n}\n\n${types.join('\n\n')}\n`;
})();

/** The entity names of the types {@link ENTITY_TYPE_DEFS} declares, by GraphQL type name. */
export const GENERATED_ENTITY_TYPES = new Map(registry.entities.filter((spec) => !DECLARED.has(spec.name)).map((spec) => [NAMES[spec.name]!.type, spec]));

const BY_ENUM = new Map(Object.entries(NAMES).map(([name, n]) => [n.enum, name]));

/** Every registry entity's names (a registry entity without them is a bug, caught by the unit test). */
export function graphqlNames(spec: EntitySpec): { enum: string; type: string } {
  const n = NAMES[spec.name];
  if (!n) throw new Error(`entity ${spec.name} has no GraphQL names`);
  return n;
}

/** The registry entity names of `EntityType` values (GraphQL has checked they are enum values). */
export function entityNamesOf(types: readonly string[] | null | undefined): string[] {
  return (types ?? []).map((t) => {
    const name = BY_ENUM.get(t);
    if (!name) throw SvcError.validation([`types: ${t} is not an entity type svc serves`]);
    return registry.entity(name).name;
  });
}

/** The entity name of an `EntityType` value (`DATA_FLOW` → `dataFlow`); undefined for another string. */
export function entityNameOfEnum(value: string): string | undefined {
  return BY_ENUM.get(value);
}

/** The `EntityType` of an entity name, when it has one (`dataset` → `DATASET`). */
export function enumOfEntityName(name: string): string | undefined {
  const spec = registry.findEntity(name);
  return spec ? NAMES[spec.name]?.enum : undefined;
}
