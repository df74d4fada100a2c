/**
 * The fields of modelFields.graphql: what DataHub's GraphQL API shows of ML models, model groups,
 * features, feature tables and primary keys, glossary nodes, data products, users, groups and notebooks
 * from their own aspects, and a dataset's editable schema. Each reads one aspect through the request's
 * entity loader, as commonAspects.ts does, under DataHub's names; a name an info aspect does not give
 * falls back to the key's, as DataHub's does.
 */
import type { EntityRef } from '../context.ts';
import { auditStamp, customProperties, editable, fromAspect, globalTags, glossaryTerms, keyEntity, keyField, keyName, knownEntity, list, text, type FieldResolver, type Obj } from './commonAspects.ts';

const platform = keyEntity('platform');
const long = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const strings = (v: unknown): string[] | null => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : null);
const versionTag = (v: unknown) => (v && typeof v === 'object' ? { versionTag: text((v as Obj).versionTag) } : null);
const description = (aspect: string): FieldResolver => fromAspect(aspect, (v) => text(v.description));

/** The entities a list of URNs names that are of the given type (a field typed as one entity type shows no other). */
function refsOf(urns: unknown, entityName: string): EntityRef[] {
  return (strings(urns) ?? []).map(knownEntity).filter((r): r is EntityRef => r !== null && r.target.spec.name === entityName);
}

const FEATURE_DATA_TYPES = new Set(['USELESS', 'NOMINAL', 'ORDINAL', 'BINARY', 'COUNT', 'TIME', 'INTERVAL', 'IMAGE', 'VIDEO', 'AUDIO', 'TEXT', 'MAP', 'SEQUENCE', 'SET', 'CONTINUOUS', 'BYTE', 'UNKNOWN']);
const featureDataType = (v: unknown): string | null => (typeof v === 'string' && FEATURE_DATA_TYPES.has(v) ? v : null);

/** What the properties of a model and of a model group have alike (the name the key's when they name none). */
const modelProperties = (v: Obj, ref: EntityRef) => ({
  name: text(v.name) ?? keyName(ref, 'name'),
  description: text(v.description),
  created: auditStamp(v.created),
  lastModified: auditStamp(v.lastModified),
  externalUrl: text(v.externalUrl),
  customProperties: customProperties(v, ref.urn),
  mlModelLineageInfo: { trainingJobs: strings(v.trainingJobs), downstreamJobs: strings(v.downstreamJobs) },
});
const params = (v: unknown) => list(v).map((p) => ({ name: text(p.name), description: text(p.description), value: text(p.value), createdAt: long(p.createdAt) }));

/** A feature's or primary key's properties (the same record shape). */
const featureProperties = (aspect: string): FieldResolver =>
  fromAspect(aspect, (v, ref) => ({
    description: text(v.description),
    dataType: featureDataType(v.dataType),
    version: versionTag(v.version),
    sources: refsOf(v.sources, 'dataset'),
    customProperties: customProperties(v, ref.urn),
  }));

/** A user's corpUserInfo as DataHub's CorpUserProperties (also its older `info`). */
const userInfo: FieldResolver =
  fromAspect('corpUserInfo', (v, ref) => ({
    active: v.active === true,
    displayName: text(v.displayName),
    email: text(v.email),
    title: text(v.title),
    manager: refsOf([v.managerUrn], 'corpuser')[0] ?? null,
    departmentId: long(v.departmentId),
    departmentName: text(v.departmentName),
    firstName: text(v.firstName),
    lastName: text(v.lastName),
    fullName: text(v.fullName),
    countryCode: text(v.countryCode),
    customProperties: customProperties(v, ref.urn),
  }));

const mlFeatureProperties = featureProperties('mlFeatureProperties');
const mlPrimaryKeyProperties = featureProperties('mlPrimaryKeyProperties');
const mlFeatureTableProperties = fromAspect('mlFeatureTableProperties', (v, ref) => ({
  description: text(v.description),
  mlFeatures: refsOf(v.mlFeatures, 'mlFeature'),
  mlPrimaryKeys: refsOf(v.mlPrimaryKeys, 'mlPrimaryKey'),
  customProperties: customProperties(v, ref.urn),
}));

/** The key's fields of a model or group (`name`, `platform`, `origin`) and the description of its properties aspect. */
const modelFields = (aspect: string) => ({ name: keyField('name'), platform, origin: keyField('origin'), description: description(aspect) });
/** The key's fields of a feature or primary key and what its properties aspect says of it. */
const featureFields = (aspect: string) => ({
  name: keyField('name'),
  featureNamespace: keyField('featureNamespace'),
  description: description(aspect),
  dataType: fromAspect(aspect, (v) => featureDataType(v.dataType)),
});

/** The resolvers of modelFields.graphql, by GraphQL type name. */
export const modelAspectFields: Record<string, Record<string, FieldResolver>> = {
  MLModel: {
    ...modelFields('mlModelProperties'),
    properties: fromAspect('mlModelProperties', (v, ref) => ({
      ...modelProperties(v, ref),
      type: text(v.type),
      version: versionTag(v.version)?.versionTag ?? null,
      date: long(v.date),
      hyperParams: params(v.hyperParams),
      trainingMetrics: params(v.trainingMetrics),
      mlFeatures: strings(v.mlFeatures),
      tags: strings(v.tags),
      groups: refsOf(v.groups, 'mlModelGroup'),
    })),
    editableProperties: editable('editableMlModelProperties'),
  },
  MLModelGroup: {
    ...modelFields('mlModelGroupProperties'),
    properties: fromAspect('mlModelGroupProperties', (v, ref) => ({ ...modelProperties(v, ref), createdAt: long(v.createdAt), version: versionTag(v.version) })),
    editableProperties: editable('editableMlModelGroupProperties'),
  },
  MLFeature: {
    ...featureFields('mlFeatureProperties'),
    properties: mlFeatureProperties,
    featureProperties: mlFeatureProperties,
    editableProperties: editable('editableMlFeatureProperties'),
  },
  MLPrimaryKey: {
    ...featureFields('mlPrimaryKeyProperties'),
    properties: mlPrimaryKeyProperties,
    primaryKeyProperties: mlPrimaryKeyProperties,
    editableProperties: editable('editableMlPrimaryKeyProperties'),
  },
  MLFeatureTable: {
    name: keyField('name'),
    platform,
    description: description('mlFeatureTableProperties'),
    properties: mlFeatureTableProperties,
    featureTableProperties: mlFeatureTableProperties,
    editableProperties: editable('editableMlFeatureTableProperties'),
  },
  GlossaryNode: {
    properties: fromAspect('glossaryNodeInfo', (v, ref) => ({
      name: text(v.name) ?? keyName(ref, 'name'),
      description: text(v.definition),
      customProperties: customProperties(v, ref.urn),
    })),
  },
  DataProduct: {
    properties: fromAspect('dataProductProperties', (v, ref) => ({
      name: text(v.name) ?? keyName(ref, 'id'),
      description: text(v.description),
      externalUrl: text(v.externalUrl),
      numAssets: Array.isArray(v.assets) ? v.assets.length : 0,
      customProperties: customProperties(v, ref.urn),
    })),
  },
  CorpUser: {
    properties: userInfo,
    info: userInfo,
    editableProperties: fromAspect('corpUserEditableInfo', (v) => ({
      displayName: text(v.displayName),
      title: text(v.title),
      aboutMe: text(v.aboutMe),
      teams: strings(v.teams),
      skills: strings(v.skills),
      pictureLink: text(v.pictureLink),
      slack: text(v.slack),
      phone: text(v.phone),
      email: text(v.email),
    })),
    status: fromAspect('corpUserStatus', (v) => (v.status === 'ACTIVE' || v.status === 'SUSPENDED' ? v.status : null)),
  },
  CorpGroup: {
    properties: fromAspect('corpGroupInfo', (v) => ({ displayName: text(v.displayName), description: text(v.description), email: text(v.email), slack: text(v.slack) })),
    info: fromAspect('corpGroupInfo', (v) => ({
      displayName: text(v.displayName),
      description: text(v.description),
      email: text(v.email),
      admins: refsOf(v.admins, 'corpuser'),
      members: refsOf(v.members, 'corpuser'),
      groups: strings(v.groups),
    })),
    editableProperties: fromAspect('corpGroupEditableInfo', (v) => ({ description: text(v.description), slack: text(v.slack), email: text(v.email), pictureLink: text(v.pictureLink) })),
    origin: async (ref, args, ctx) =>
      (await fromAspect('origin', (v) => ({ type: ['NATIVE', 'EXTERNAL'].includes(String(v.type)) ? v.type : 'UNKNOWN', externalType: text(v.externalType) }))(ref, args, ctx)) ?? {
        type: 'UNKNOWN',
        externalType: null,
      },
  },
  Notebook: {
    tool: keyField('notebookTool'),
    notebookId: keyField('notebookId'),
    info: fromAspect('notebookInfo', (v, ref) => {
      const stamps = (v.changeAuditStamps ?? {}) as Obj;
      return {
        title: text(v.title),
        description: text(v.description),
        externalUrl: text(v.externalUrl),
        customProperties: customProperties(v, ref.urn),
        changeAuditStamps: { created: auditStamp(stamps.created), lastModified: auditStamp(stamps.lastModified), deleted: auditStamp(stamps.deleted) },
      };
    }),
    editableProperties: editable('editableNotebookProperties'),
  },
  Dataset: {
    editableSchemaMetadata: fromAspect('editableSchemaMetadata', (v, ref) => ({
      editableSchemaFieldInfo: list(v.editableSchemaFieldInfo).map((f) => {
        const tags = f.globalTags ? globalTags(f.globalTags as Obj, ref.urn) : null;
        return { fieldPath: String(f.fieldPath), description: text(f.description), globalTags: tags, tags, glossaryTerms: f.glossaryTerms ? glossaryTerms(f.glossaryTerms as Obj, ref.urn) : null };
      }),
    })),
  },
  ResolvedActor: {
    __resolveType: ((ref: EntityRef) => (ref.target.spec.name === 'corpuser' ? 'CorpUser' : 'CorpGroup')) as never,
  },
};

/** The aspects these fields read, by field name, for a search to read its entities with. */
export const MODEL_FIELD_ASPECTS: Record<string, string[]> = {
  properties: ['mlModelProperties', 'mlModelGroupProperties', 'mlFeatureProperties', 'mlPrimaryKeyProperties', 'mlFeatureTableProperties', 'glossaryNodeInfo', 'dataProductProperties', 'corpUserInfo', 'corpGroupInfo'],
  info: ['corpUserInfo', 'corpGroupInfo', 'notebookInfo'],
  editableProperties: [
    'editableMlModelProperties', 'editableMlModelGroupProperties', 'editableMlFeatureProperties', 'editableMlPrimaryKeyProperties', 'editableMlFeatureTableProperties',
    'corpUserEditableInfo', 'corpGroupEditableInfo', 'editableNotebookProperties',
  ],
  description: ['mlModelProperties', 'mlModelGroupProperties', 'mlFeatureProperties', 'mlPrimaryKeyProperties', 'mlFeatureTableProperties'],
  dataType: ['mlFeatureProperties', 'mlPrimaryKeyProperties'],
  featureProperties: ['mlFeatureProperties'],
  primaryKeyProperties: ['mlPrimaryKeyProperties'],
  featureTableProperties: ['mlFeatureTableProperties'],
  origin: ['origin'],
  editableSchemaMetadata: ['editableSchemaMetadata'],
};
