-- Which aspects a search document is built from (search/documents.ts): the key aspects (named
-- `<entity>Key`), `status`, `structuredProperties`, a property's `propertyDefinition` (its holders'
-- fields follow it), and the aspects DataHub's common search fields are read from (search/fields.ts,
-- ASPECT_FIELDS; a unit test, fields.test.ts, holds this list to that one). A change of a latest row of
-- one of these queues its entity in the search outbox (R__svc_search_changed.sql,
-- R__svc_aspects_inserted.sql); a change of any other aspect changes no document.
CREATE OR REPLACE FUNCTION svc_search_aspect(aspect text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT aspect LIKE '%Key' OR aspect = ANY ('{
    agentSkillInfo, aiAgentInfo, apiProperties, applicationProperties, assertionInfo, browsePaths,
    browsePathsV2, businessAttributeInfo, chartInfo, container, containerProperties, corpGroupEditableInfo,
    corpGroupInfo, corpUserInfo, dashboardInfo, dataContractStatus, dataFlowInfo, dataHubAccessTokenInfo,
    dataHubConnectionDetails, dataHubExecutionRequestInput, dataHubIngestionSourceInfo, dataHubPolicyInfo, dataHubRoleInfo,
    dataHubSecretValue, dataHubViewInfo, dataJobInfo, dataPlatformInfo, dataPlatformInstance,
    dataPlatformInstanceProperties, dataProcessInstanceProperties, dataProcessInstanceRelationships,
    dataProductProperties, dataTypeInfo,
    datasetProperties, documentInfo, domainProperties, domains, editableChartProperties,
    editableContainerProperties, editableDashboardProperties, editableDataFlowProperties,
    editableDataJobProperties, editableDatasetProperties, editableERModelRelationshipProperties,
    editableMlFeatureProperties, editableMlFeatureTableProperties, editableMlModelGroupProperties,
    editableMlModelProperties, editableMlPrimaryKeyProperties, editableNotebookProperties, entityTypeInfo,
    erModelRelationshipProperties, formInfo, globalTags, glossaryNodeInfo, glossaryTermInfo, glossaryTerms,
    incidentInfo, lifecycleStageTypeInfo, metricInfo, mlFeatureProperties, mlFeatureTableProperties,
    mlModelDeploymentProperties, mlModelGroupProperties, mlModelProperties, mlPrimaryKeyProperties,
    mlTrainingRunProperties, notebookInfo, ownership, ownershipTypeInfo, propertyDefinition, queryProperties,
    repositoryProperties, roleProperties, schemafieldInfo, semanticModelInfo, serviceProperties, status,
    structuredProperties, subTypes, tagProperties, testInfo, versionInfo, versionSetProperties
  }'::text[])
$$;
