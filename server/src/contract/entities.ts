/**
 * The entity registry, declared once: each entity type, how its URN maps to its key aspect, the
 * aspects it may carry and which of them are time series. Everything else (validation, the OpenAPI
 * document, bootstrapped entityType entities: server/src/registry/) is derived from this list, and a
 * client reads it to know what a URN names (the CLI checks a file's URNs before it writes anything).
 */
import { SvcError } from './errors.ts';
import { parseUrn, type Urn } from './urn.ts';

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

/** The time series aspects: their entries are kept apart from an entity's versioned aspects, and truncated. */
export const TIMESERIES_ASPECTS: ReadonlySet<string> = new Set(['datasetProfile', 'datasetUsageStatistics', 'operation']);

const BY_LOWER = new Map(ENTITIES.map((e) => [e.name.toLowerCase(), e]));

/** The entity type of a name in any case (`DataSet` is `dataset`), as DataHub reads one on input; undefined for an unknown one. */
export const findEntityType = (name: string): EntitySpec | undefined => BY_LOWER.get(name.toLowerCase());

/** A URN parsed and matched with its entity type. */
export interface EntityUrn extends Urn {
  urn: string;
  spec: EntitySpec;
}

/**
 * Parses a URN and finds its entity type; an unparsable URN, an unknown type (or one written in
 * another case) or a tuple of the wrong shape for the type is INVALID_URN (`Invalid urn!: <urn>`).
 */
export function entityUrn(raw: string): EntityUrn {
  const parsed = parseUrn(raw);
  const spec = BY_LOWER.get(parsed.entityType.toLowerCase());
  if (!spec || spec.name !== parsed.entityType) throw SvcError.invalidUrn(raw, new Error('unknown entity type'));
  if (spec.keyFields.length > 1 && parsed.parts.length !== spec.keyFields.length) {
    throw SvcError.invalidUrn(raw, new Error(`expected ${spec.keyFields.length} tuple parts`));
  }
  if (spec.keyFields.length === 1 && parsed.parts.length !== 1) {
    // A single-field key keeps a parenthesised id whole, e.g. urn:li:tag:(a,b) has name "(a,b)".
    parsed.parts = [parsed.id];
  }
  spec.keyFields.forEach((f, i) => {
    if (f.urnOf) {
      const inner = parseUrn(parsed.parts[i]!);
      if (inner.entityType !== f.urnOf) throw SvcError.invalidUrn(raw, new Error(`${f.name} must be a ${f.urnOf} urn`));
    }
  });
  return { entityType: parsed.entityType, id: parsed.id, parts: parsed.parts, urn: raw, spec };
}
