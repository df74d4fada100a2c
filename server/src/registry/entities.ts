/**
 * The entity registry, declared once: each entity type, how its URN maps to its key aspect, and the
 * aspects it may carry. Everything else (validation, the OpenAPI document, bootstrapped entityType
 * entities) is derived from this list.
 */

/** One field of a key aspect, filled from one part of the URN id. */
export interface KeyField {
  name: string;
  /** When set, the part must itself be a URN of this entity type. */
  urnOf?: string;
}

export interface EntitySpec {
  /** Canonical name as in URNs and paths, e.g. `dataset`, `schemaField`, `corpuser`. */
  name: string;
  keyAspect: string;
  /** Key fields in URN order; one field means a plain id, several mean a tuple id. */
  keyFields: KeyField[];
  aspects: string[];
}

const common = ['status', 'structuredProperties'];

export const ENTITIES: EntitySpec[] = [
  {
    name: 'dataset',
    keyAspect: 'datasetKey',
    keyFields: [{ name: 'platform', urnOf: 'dataPlatform' }, { name: 'name' }, { name: 'origin' }],
    aspects: [...common, 'datasetProperties', 'schemaMetadata', 'subTypes', 'upstreamLineage', 'datasetProfile', 'datasetUsageStatistics', 'operation'],
  },
  {
    name: 'schemaField',
    keyAspect: 'schemaFieldKey',
    keyFields: [{ name: 'parent' }, { name: 'fieldPath' }],
    aspects: [...common],
  },
  {
    name: 'dataFlow',
    keyAspect: 'dataFlowKey',
    keyFields: [{ name: 'orchestrator' }, { name: 'flowId' }, { name: 'cluster' }],
    aspects: [...common, 'dataFlowInfo', 'subTypes'],
  },
  {
    name: 'dataJob',
    keyAspect: 'dataJobKey',
    keyFields: [{ name: 'flow', urnOf: 'dataFlow' }, { name: 'jobId' }],
    aspects: [...common, 'dataJobInfo', 'subTypes'],
  },
  { name: 'chart', keyAspect: 'chartKey', keyFields: [{ name: 'dashboardTool' }, { name: 'chartId' }], aspects: [...common, 'subTypes'] },
  {
    name: 'dashboard',
    keyAspect: 'dashboardKey',
    keyFields: [{ name: 'dashboardTool' }, { name: 'dashboardId' }],
    aspects: [...common, 'subTypes'],
  },
  { name: 'container', keyAspect: 'containerKey', keyFields: [{ name: 'guid' }], aspects: [...common, 'subTypes'] },
  { name: 'domain', keyAspect: 'domainKey', keyFields: [{ name: 'id' }], aspects: [...common] },
  { name: 'glossaryTerm', keyAspect: 'glossaryTermKey', keyFields: [{ name: 'name' }], aspects: [...common] },
  { name: 'tag', keyAspect: 'tagKey', keyFields: [{ name: 'name' }], aspects: [...common] },
  { name: 'corpuser', keyAspect: 'corpUserKey', keyFields: [{ name: 'username' }], aspects: [...common] },
  { name: 'corpGroup', keyAspect: 'corpGroupKey', keyFields: [{ name: 'name' }], aspects: [...common] },
  { name: 'dataPlatform', keyAspect: 'dataPlatformKey', keyFields: [{ name: 'platformName' }], aspects: ['status'] },
  {
    name: 'structuredProperty',
    keyAspect: 'structuredPropertyKey',
    keyFields: [{ name: 'id' }],
    aspects: ['propertyDefinition', 'status'],
  },
  { name: 'dataType', keyAspect: 'dataTypeKey', keyFields: [{ name: 'id' }], aspects: ['dataTypeInfo', 'status'] },
  { name: 'entityType', keyAspect: 'entityTypeKey', keyFields: [{ name: 'id' }], aspects: ['entityTypeInfo', 'status'] },
  // The records of ingestion runs `datahub ingest` keeps by default: the recipe's source and each run.
  {
    name: 'dataHubIngestionSource',
    keyAspect: 'dataHubIngestionSourceKey',
    keyFields: [{ name: 'id' }],
    aspects: ['dataHubIngestionSourceInfo', 'status'],
  },
  {
    name: 'dataHubExecutionRequest',
    keyAspect: 'dataHubExecutionRequestKey',
    keyFields: [{ name: 'id' }],
    aspects: ['dataHubExecutionRequestInput', 'dataHubExecutionRequestResult', 'status'],
  },
];
