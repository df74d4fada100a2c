/**
 * Entities as GraphQL types: `entity(urn)` and `dataset(urn)`, the `Entity` interface, the fields each
 * entity type shows (its key fields, `structuredProperties`), data types and entity types with their
 * `info`. Aspects are read through the request's entity loader, as reads show them (values of
 * soft-deleted properties hidden).
 */
import { registry } from '../../../registry/registry.ts';
import { SvcError } from '../../../shared/errors.ts';
import { logicalType, entityNameOf, type Assignment, type PrimitiveValue, type StructuredProperties } from '../../../properties/types.ts';
import { aspectOf, entityRef, forgetEntity, then, type EntityRef, type GraphQLContext } from '../context.ts';
import { enumOfEntityName, GENERATED_ENTITY_TYPES, graphqlNames } from '../entityTypes.ts';
import { commonAspectFields, keyEntity, keyField } from './commonAspects.ts';

type Resolver<P, A = Record<string, never>, R = unknown> = (parent: P, args: A, ctx: GraphQLContext) => R | Promise<R>;

/** A typed value as DataHub's `PropertyValue` union. */
export function propertyValue(v: PrimitiveValue): { __typename: 'StringValue'; stringValue: string } | { __typename: 'NumberValue'; numberValue: number } {
  return 'double' in v ? { __typename: 'NumberValue', numberValue: v.double } : { __typename: 'StringValue', stringValue: v.string };
}

/** The `StructuredProperties` of an entity from its aspect value (as shown). */
export function structuredPropertiesOf(urn: string, value: StructuredProperties | undefined): { associatedUrn: string; properties: Assignment[] } | null {
  if (!value) return null;
  return { associatedUrn: urn, properties: value.properties };
}

/** An entity of the given type, or null; a URN of another type is a VALIDATION error. */
async function existing(ctx: GraphQLContext, urn: string, entityName?: string): Promise<EntityRef | null> {
  const ref = entityRef(urn);
  if (entityName && ref.target.spec.name !== entityName) throw SvcError.validation([`urn ${urn} is of entity type ${ref.target.spec.name}, not ${entityName}`]);
  return (await ctx.entities.load(urn)) ? ref : null;
}

const key = (ref: EntityRef, field: string) => registry.keyAspectValue(ref.target)[field];

/** Fields every entity type has. */
const base = {
  urn: (ref: EntityRef) => ref.urn,
  type: (ref: EntityRef) => graphqlNames(ref.target.spec).enum,
  exists: async (ref: EntityRef, _: unknown, ctx: GraphQLContext) => (await ctx.entities.load(ref.urn)) !== null,
};

const withProperties = {
  ...base,
  structuredProperties: (ref: EntityRef, _: unknown, ctx: GraphQLContext) => then(aspectOf<StructuredProperties>(ctx, ref.urn, 'structuredProperties'), (value) => structuredPropertiesOf(ref.urn, value)),
};


/** The run id DataHub's clients write when a write belongs to no ingestion run. */
const NO_RUN_ID = 'no-run-id-provided';

/**
 * When an ingestion run last wrote one of the entity's aspects (DataHub's `lastIngested`): the latest
 * `lastObserved` of the aspects whose system metadata names a run; null when none does.
 */
async function lastIngested(ref: EntityRef, _: unknown, ctx: GraphQLContext): Promise<number | null> {
  // A search may have read the entity with some aspects only: this needs all of them.
  if (ctx.primed.has(ref.urn)) forgetEntity(ctx, ref.urn);
  const record = await ctx.entities.load(ref.urn);
  let latest: number | null = null;
  for (const a of record?.aspects.values() ?? []) {
    const { runId, lastObserved } = a.systemMetadata as { runId?: unknown; lastObserved?: unknown };
    if (typeof runId === 'string' && runId !== NO_RUN_ID && typeof lastObserved === 'number' && (latest === null || lastObserved > latest)) latest = lastObserved;
  }
  return latest;
}

/** DataHub's page of runs when none is asked for. */
const DEFAULT_RUNS = 20;

/** A page of a data job's runs that are not soft-deleted, the newest first (DataHub sorts them by `created` too). */
async function runs(ref: EntityRef, args: { start?: number | null; count?: number | null }, ctx: GraphQLContext) {
  const start = args.start ?? 0;
  const found = await ctx.catalog.search.search(ctx.principal, {
    entityTypes: ['dataProcessInstance'],
    query: '*',
    filters: [{ and: [{ field: 'parentTemplate', condition: 'EQUAL', values: [ref.urn] }] }],
    sortField: 'created',
    descending: true,
    start,
    count: args.count ?? DEFAULT_RUNS,
    aspects: [],
    total: true,
  });
  return { start, count: found.entities.length, total: found.total ?? 0, runs: found.entities.map((e) => entityRef(e.urn)) };
}


export const entityResolvers = {
  Query: {
    entity: ((_p, { urn }, ctx) => existing(ctx, urn)) as Resolver<unknown, { urn: string }>,
    dataset: ((_p, { urn }, ctx) => existing(ctx, urn, 'dataset')) as Resolver<unknown, { urn: string }>,
    dataFlow: ((_p, { urn }, ctx) => existing(ctx, urn, 'dataFlow')) as Resolver<unknown, { urn: string }>,
    dataJob: ((_p, { urn }, ctx) => existing(ctx, urn, 'dataJob')) as Resolver<unknown, { urn: string }>,
  },
  Entity: {
    __resolveType: (ref: EntityRef) => graphqlNames(ref.target.spec).type,
  },
  Dataset: { ...withProperties, ...commonAspectFields.Dataset, name: keyField('name'), origin: keyField('origin'), platform: keyEntity('platform') },
  DataFlow: { ...withProperties, ...commonAspectFields.DataFlow, orchestrator: keyField('orchestrator'), flowId: keyField('flowId'), cluster: keyField('cluster'), lastIngested },
  DataJob: { ...withProperties, ...commonAspectFields.DataJob, jobId: keyField('jobId'), dataFlow: keyEntity('flow'), lastIngested, runs },
  DataProcessInstance: {
    ...base,
    name: (ref: EntityRef, _: unknown, ctx: GraphQLContext) => then(aspectOf<{ name?: string }>(ctx, ref.urn, 'dataProcessInstanceProperties'), (v) => v?.name ?? null),
    created: (ref: EntityRef, _: unknown, ctx: GraphQLContext) =>
      then(aspectOf<{ created?: { time: number; actor?: string } }>(ctx, ref.urn, 'dataProcessInstanceProperties'), (v) => (v?.created ? { time: v.created.time, actor: v.created.actor ?? null } : null)),
  },
  SchemaFieldEntity: { ...withProperties, fieldPath: keyField('fieldPath') },
  Chart: { ...withProperties, ...commonAspectFields.Chart },
  Dashboard: { ...withProperties, ...commonAspectFields.Dashboard },
  Container: { ...withProperties, ...commonAspectFields.Container },
  Domain: { ...withProperties, ...commonAspectFields.Domain, id: keyField('id') },
  GlossaryTerm: { ...withProperties, ...commonAspectFields.GlossaryTerm, name: keyField('name') },
  Tag: { ...withProperties, ...commonAspectFields.Tag, name: keyField('name') },
  DataPlatformInstance: { ...base, platform: keyEntity('platform'), instanceId: keyField('instance') },
  OwnerType: { __resolveType: (ref: EntityRef) => graphqlNames(ref.target.spec).type },
  CorpUser: { ...withProperties, username: keyField('username') },
  CorpGroup: { ...withProperties, name: keyField('name') },
  DataPlatform: { ...base, name: keyField('platformName') },
  IngestionSource: { ...base, name: async (ref: EntityRef, _: unknown, ctx: GraphQLContext) => (await aspectOf<{ name: string }>(ctx, ref.urn, 'dataHubIngestionSourceInfo'))?.name ?? null },
  ExecutionRequest: base,
  // Its definition: see propertyResolvers.ts.
  StructuredPropertyEntity: base,
  DataTypeEntity: {
    ...base,
    info: async (ref: EntityRef, _: unknown, ctx: GraphQLContext) => {
      const info = await aspectOf<{ qualifiedName: string; displayName?: string; description?: string }>(ctx, ref.urn, 'dataTypeInfo');
      const type = logicalType(ref.urn);
      return { qualifiedName: key(ref, 'id'), ...info, type: type === 'unknown' ? 'OTHER' : type.toUpperCase() };
    },
  },
  EntityTypeEntity: {
    ...base,
    info: async (ref: EntityRef, _: unknown, ctx: GraphQLContext) => {
      const info = await aspectOf<{ qualifiedName: string; displayName?: string; description?: string }>(ctx, ref.urn, 'entityTypeInfo');
      const type = enumOfEntityName(entityNameOf(ref.urn));
      if (!type) throw new SvcError('INTERNAL', `entity type ${ref.urn} names no entity`);
      return { qualifiedName: key(ref, 'id'), ...info, type };
    },
  },
  // The other entity types of DataHub's model (entityTypes.ts).
  ...Object.fromEntries([...GENERATED_ENTITY_TYPES].map(([type, spec]) => [type, spec.aspects.includes('structuredProperties') ? withProperties : base])),
  StructuredPropertiesEntry: {
    structuredProperty: (a: Assignment) => entityRef(a.propertyUrn),
    values: (a: Assignment) => a.values.map(propertyValue),
    valueEntities: (a: Assignment) =>
      a.values.map((v) => {
        if (!('string' in v) || !v.string.startsWith('urn:li:')) return null;
        try {
          return entityRef(v.string);
        } catch {
          return null;
        }
      }),
    associatedUrn: (a: Assignment & { associatedUrn?: string }) => a.associatedUrn,
  },
  StructuredProperties: {
    properties: (p: { associatedUrn: string; properties: Assignment[] }) => p.properties.map((a) => ({ ...a, associatedUrn: p.associatedUrn })),
  },
  PropertyValue: {
    __resolveType: (v: { __typename: string }) => v.__typename,
  },
};
