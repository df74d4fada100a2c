/**
 * svc's own JSON Schemas (draft-07, checked by ajv) of the aspects it has rules for: they follow
 * DataHub's PDL models, and type some fields more narrowly (the fields DataHub types as URNs of an
 * entity type, typed property values). The registry adds the fields DataHub's records have that these
 * do not name (datahubModel.ts, withDatahubFields); every other aspect is validated by DataHub's
 * structure alone. Unknown fields are rejected so a typo is reported instead of silently stored.
 */

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const bool: Schema = { type: 'boolean' };
/** A Pegasus long, within what a JavaScript number holds exactly (a larger one would be stored rounded). */
const long: Schema = { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
const num: Schema = { type: 'number' };
const strMap: Schema = { type: 'object', additionalProperties: { type: 'string' } };
const strList: Schema = { type: 'array', items: { type: 'string' } };

/**
 * A field DataHub types as a URN of an entity type (`DatasetUrn`, `DataFlowUrn`, …): its shape is
 * checked as DataHub's deserialisation checks it (any string was stored, where DataHub answers
 * "Invalid urn"). Audit stamps' `actor` stays a plain string: values stored before this check would
 * otherwise fail every later patch of their aspect.
 */
function urnOf(entityType: string, tuple = false): Schema {
  const id = tuple ? '\\(.+\\)' : '\\S.*';
  return { type: 'string', pattern: `^urn:li:${entityType}:${id}$`, errorMessage: { pattern: `must be a ${entityType} URN, urn:li:${entityType}:${tuple ? '(…)' : '<id>'}` } };
}

function record(properties: Record<string, Schema>, required: string[] = [], open = false): Schema {
  return { type: 'object', properties, required, additionalProperties: open };
}

/** `{time, actor, impersonator?, message?}`. */
export const auditStamp = record({ time: long, actor: str, impersonator: str, message: str }, ['time', 'actor']);

/**
 * The system metadata a write may carry (DataHub's SystemMetadata): its fields typed, others kept
 * (later DataHub clients add some). `lastObserved` and the version number are set by svc.
 */
export const systemMetadata = record(
  { lastObserved: long, runId: str, lastRunId: str, pipelineName: str, registryName: str, registryVersion: str, properties: strMap, version: str },
  [],
  true,
);

/** A typed value: exactly one of `{"string": …}` or `{"double": …}` (Pegasus union wire form). */
export const primitivePropertyValue: Schema = {
  type: 'object',
  properties: { string: str, double: num },
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  errorMessage: {
    minProperties: 'a typed value must have exactly one key, "string" or "double"',
    maxProperties: 'a typed value must have exactly one key, "string" or "double"',
  },
};

const timeStamp = record({ time: long, actor: str }, ['time']);

const timeseriesBase: Record<string, Schema> = {
  timestampMillis: long,
  eventGranularity: record({ unit: { enum: ['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'] }, multiple: long }, ['unit']),
  partitionSpec: record({ partition: str, type: str, timePartition: record({ startTimeMillis: long, durationMillis: long }, [], true) }, [], true),
  messageId: str,
};

/** Aspect name → schema. Key aspects are built from the entity registry, not listed here. */
export const ASPECT_SCHEMAS: Record<string, Schema> = {
  status: record({ removed: bool }),
  subTypes: record({ typeNames: strList }, ['typeNames']),
  structuredProperties: record(
    {
      properties: {
        type: 'array',
        items: record(
          {
            propertyUrn: str,
            values: { type: 'array', items: primitivePropertyValue },
            created: auditStamp,
            lastModified: auditStamp,
            attribution: { type: 'object' },
          },
          ['propertyUrn', 'values'],
        ),
      },
    },
    ['properties'],
  ),
  propertyDefinition: record(
    {
      qualifiedName: str,
      displayName: str,
      valueType: str,
      typeQualifier: { type: 'object', additionalProperties: strList },
      allowedValues: { type: 'array', items: record({ value: primitivePropertyValue, description: str }, ['value']) },
      cardinality: { enum: ['SINGLE', 'MULTIPLE'] },
      entityTypes: strList,
      description: str,
      searchConfiguration: { type: 'object' },
      immutable: bool,
      version: str,
      created: auditStamp,
      lastModified: auditStamp,
    },
    ['qualifiedName', 'valueType', 'entityTypes'],
  ),
  dataTypeInfo: record({ qualifiedName: str, displayName: str, description: str }, ['qualifiedName']),
  entityTypeInfo: record({ qualifiedName: str, displayName: str, description: str }, ['qualifiedName']),
  datasetProperties: record({
    customProperties: strMap,
    externalUrl: str,
    name: str,
    qualifiedName: str,
    description: str,
    uri: str,
    created: timeStamp,
    lastModified: timeStamp,
    tags: strList,
  }),
  schemaMetadata: record(
    {
      schemaName: str,
      platform: urnOf('dataPlatform'),
      version: long,
      created: auditStamp,
      lastModified: auditStamp,
      deleted: auditStamp,
      dataset: urnOf('dataset', true),
      cluster: str,
      hash: str,
      platformSchema: { type: 'object' },
      fields: {
        type: 'array',
        items: record({ fieldPath: str, type: { type: 'object' }, nativeDataType: str, nullable: bool, description: str }, ['fieldPath', 'type', 'nativeDataType'], true),
      },
      primaryKeys: strList,
      foreignKeysSpecs: { type: 'object' },
      foreignKeys: { type: 'array' },
    },
    ['schemaName', 'platform', 'version', 'hash', 'platformSchema', 'fields'],
  ),
  // A dataset's upstreams (DataHub's UpstreamLineage), as `dataset upsert` writes them for `downstreams`;
  // column-level lineage is kept as given.
  upstreamLineage: record(
    {
      upstreams: {
        type: 'array',
        items: record(
          {
            auditStamp,
            created: auditStamp,
            dataset: urnOf('dataset', true),
            type: { enum: ['COPY', 'TRANSFORMED', 'VIEW', 'IMPORT'] },
            properties: strMap,
            query: str,
          },
          ['dataset', 'type'],
        ),
      },
      fineGrainedLineages: { type: 'array' },
    },
    ['upstreams'],
  ),
  dataFlowInfo: record(
    { name: str, description: str, project: str, customProperties: strMap, externalUrl: str, created: timeStamp, lastModified: timeStamp, env: str },
    ['name'],
  ),
  dataJobInfo: record(
    {
      name: str,
      type: { anyOf: [str, { type: 'object' }] },
      description: str,
      customProperties: strMap,
      externalUrl: str,
      flowUrn: urnOf('dataFlow', true),
      created: timeStamp,
      lastModified: timeStamp,
      status: str,
      env: str,
    },
    ['name', 'type'],
  ),
  datasetProfile: record(
    {
      ...timeseriesBase,
      rowCount: long,
      columnCount: long,
      sizeInBytes: long,
      fieldProfiles: { type: 'array', items: record({ fieldPath: str }, ['fieldPath'], true) },
    },
    ['timestampMillis'],
  ),
  datasetUsageStatistics: record(
    {
      ...timeseriesBase,
      uniqueUserCount: long,
      totalSqlQueries: long,
      topSqlQueries: strList,
      userCounts: { type: 'array', items: record({ user: str, count: long, userEmail: str }, ['count'], true) },
      fieldCounts: { type: 'array', items: record({ fieldPath: str, count: long }, ['fieldPath', 'count']) },
    },
    ['timestampMillis'],
  ),
  operation: record(
    {
      ...timeseriesBase,
      actor: str,
      operationType: { enum: ['INSERT', 'UPDATE', 'DELETE', 'CREATE', 'ALTER', 'DROP', 'CUSTOM', 'UNKNOWN'] },
      customOperationType: str,
      numAffectedRows: long,
      affectedDatasets: strList,
      sourceType: { enum: ['DATA_PROCESS', 'DATA_PLATFORM', 'MANUAL'] },
      customProperties: strMap,
      lastUpdatedTimestamp: long,
      queries: strList,
    },
    ['timestampMillis', 'operationType', 'lastUpdatedTimestamp'],
  ),
  // An ingestion run's source and the run itself, as `datahub ingest` records them (its default report).
  dataHubIngestionSourceInfo: record(
    {
      name: str,
      type: str,
      platform: str,
      schedule: record({ interval: str, timezone: str }, ['interval', 'timezone']),
      config: record({ recipe: str, version: str, executorId: str, debugMode: bool, extraArgs: strMap }, ['recipe']),
      source: record({ type: { enum: ['SYSTEM'] } }, ['type']),
    },
    ['name', 'type', 'config'],
  ),
  dataHubExecutionRequestInput: record(
    {
      task: str,
      args: strMap,
      executorId: str,
      source: record({ type: str, ingestionSource: str }, ['type']),
      requestedAt: long,
      actorUrn: str,
      cliVersionAudit: record({ source: str, serverVersion: str }, ['source']),
    },
    ['task', 'args', 'executorId', 'source', 'requestedAt'],
  ),
  dataHubExecutionRequestResult: record(
    {
      status: str,
      report: str,
      structuredReport: record({ type: str, serializedValue: str, contentType: str }, ['type', 'serializedValue', 'contentType']),
      startTimeMs: long,
      durationMs: long,
    },
    ['status'],
  ),
};
