/**
 * The Pegasus (Rest.li) class of each aspect: DataHub's clients wrap an aspect under it when they read
 * (`{"com.linkedin.common.Status": {...}}`) and name it in proposals. Key aspects are
 * `com.linkedin.metadata.key.<Name>` (`datasetKey` → `DatasetKey`), but for the few in KEY_CLASSES.
 */
export const PEGASUS_CLASSES: Record<string, string> = {
  status: 'com.linkedin.common.Status',
  subTypes: 'com.linkedin.common.SubTypes',
  operation: 'com.linkedin.common.Operation',
  structuredProperties: 'com.linkedin.structured.StructuredProperties',
  propertyDefinition: 'com.linkedin.structured.StructuredPropertyDefinition',
  datasetProperties: 'com.linkedin.dataset.DatasetProperties',
  upstreamLineage: 'com.linkedin.dataset.UpstreamLineage',
  datasetProfile: 'com.linkedin.dataset.DatasetProfile',
  datasetUsageStatistics: 'com.linkedin.dataset.DatasetUsageStatistics',
  schemaMetadata: 'com.linkedin.schema.SchemaMetadata',
  dataFlowInfo: 'com.linkedin.datajob.DataFlowInfo',
  dataJobInfo: 'com.linkedin.datajob.DataJobInfo',
  dataTypeInfo: 'com.linkedin.datatype.DataTypeInfo',
  entityTypeInfo: 'com.linkedin.entitytype.EntityTypeInfo',
  dataHubIngestionSourceInfo: 'com.linkedin.ingestion.DataHubIngestionSourceInfo',
  dataHubExecutionRequestInput: 'com.linkedin.execution.ExecutionRequestInput',
  dataHubExecutionRequestResult: 'com.linkedin.execution.ExecutionRequestResult',
};

/** Key aspects whose class lives beside their entity's other models rather than under `metadata.key`. */
const KEY_CLASSES: Record<string, string> = {
  structuredPropertyKey: 'com.linkedin.structured.StructuredPropertyKey',
  entityTypeKey: 'com.linkedin.entitytype.EntityTypeKey',
  dataTypeKey: 'com.linkedin.datatype.DataTypeKey',
  dataHubExecutionRequestKey: 'com.linkedin.metadata.key.ExecutionRequestKey',
};

/** The Pegasus class of an aspect (`undefined` for one svc declares without a DataHub counterpart). */
export function pegasusClassOf(aspect: string, isKey: boolean): string | undefined {
  if (isKey) return KEY_CLASSES[aspect] ?? `com.linkedin.metadata.key.${aspect[0]!.toUpperCase()}${aspect.slice(1)}`;
  return PEGASUS_CLASSES[aspect];
}
