/**
 * DataHub's `EntityType` enum and GraphQL type name of each registry entity: `dataset` ↔ `DATASET`
 * (type `Dataset`), `corpuser` ↔ `CORP_USER` (type `CorpUser`).
 */
import { SvcError } from '../../errors.ts';
import { registry, type EntitySpec } from '../../registry/registry.ts';

const NAMES: Record<string, { enum: string; type: string }> = {
  dataset: { enum: 'DATASET', type: 'Dataset' },
  schemaField: { enum: 'SCHEMA_FIELD', type: 'SchemaFieldEntity' },
  dataFlow: { enum: 'DATA_FLOW', type: 'DataFlow' },
  dataJob: { enum: 'DATA_JOB', type: 'DataJob' },
  chart: { enum: 'CHART', type: 'Chart' },
  dashboard: { enum: 'DASHBOARD', type: 'Dashboard' },
  container: { enum: 'CONTAINER', type: 'Container' },
  domain: { enum: 'DOMAIN', type: 'Domain' },
  glossaryTerm: { enum: 'GLOSSARY_TERM', type: 'GlossaryTerm' },
  tag: { enum: 'TAG', type: 'Tag' },
  corpuser: { enum: 'CORP_USER', type: 'CorpUser' },
  corpGroup: { enum: 'CORP_GROUP', type: 'CorpGroup' },
  dataPlatform: { enum: 'DATA_PLATFORM', type: 'DataPlatform' },
  structuredProperty: { enum: 'STRUCTURED_PROPERTY', type: 'StructuredPropertyEntity' },
  dataType: { enum: 'DATA_TYPE', type: 'DataTypeEntity' },
  entityType: { enum: 'ENTITY_TYPE', type: 'EntityTypeEntity' },
  dataHubIngestionSource: { enum: 'INGESTION_SOURCE', type: 'IngestionSource' },
  dataHubExecutionRequest: { enum: 'EXECUTION_REQUEST', type: 'ExecutionRequest' },
};

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

/** The `EntityType` of an entity name, when it has one (`dataset` → `DATASET`). */
export function enumOfEntityName(name: string): string | undefined {
  const spec = registry.findEntity(name);
  return spec ? NAMES[spec.name]?.enum : undefined;
}
