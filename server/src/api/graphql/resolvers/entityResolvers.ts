/**
 * Entities as GraphQL types: `entity(urn)` and `dataset(urn)`, the `Entity` interface, the fields each
 * entity type shows (its key fields, `structuredProperties`), data types and entity types with their
 * `info`. Aspects are read through the request's entity loader, as reads show them (values of
 * soft-deleted properties hidden).
 */
import { registry } from '../../../registry/registry.ts';
import { SvcError } from '../../../shared/errors.ts';
import { logicalType, entityNameOf, type Assignment, type PrimitiveValue, type StructuredProperties } from '../../../properties/types.ts';
import { aspectOf, entityRef, then, type EntityRef, type GraphQLContext } from '../context.ts';
import { enumOfEntityName, GENERATED_ENTITY_TYPES, graphqlNames } from '../entityTypes.ts';

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

const keyField = (field: string) => (ref: EntityRef) => key(ref, field);

export const entityResolvers = {
  Query: {
    entity: ((_p, { urn }, ctx) => existing(ctx, urn)) as Resolver<unknown, { urn: string }>,
    dataset: ((_p, { urn }, ctx) => existing(ctx, urn, 'dataset')) as Resolver<unknown, { urn: string }>,
  },
  Entity: {
    __resolveType: (ref: EntityRef) => graphqlNames(ref.target.spec).type,
  },
  Dataset: { ...withProperties, name: keyField('name'), origin: keyField('origin'), platform: (ref: EntityRef) => entityRef(key(ref, 'platform')!) },
  DataFlow: { ...withProperties, orchestrator: keyField('orchestrator'), flowId: keyField('flowId'), cluster: keyField('cluster') },
  DataJob: { ...withProperties, jobId: keyField('jobId') },
  SchemaFieldEntity: { ...withProperties, fieldPath: keyField('fieldPath') },
  Chart: withProperties,
  Dashboard: withProperties,
  Container: withProperties,
  Domain: withProperties,
  GlossaryTerm: withProperties,
  Tag: withProperties,
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
