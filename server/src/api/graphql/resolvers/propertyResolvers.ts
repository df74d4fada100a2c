/**
 * Structured properties over GraphQL: the `structuredProperty(urn)` read, the definition's types, and
 * the five mutations. Each mutation is one call of the properties core ({@link PropertyService}), so
 * its rules and messages are those of REST; what a mutation returns is read back as a read shows it.
 */
import { SvcError, Violations } from '../../../shared/errors.ts';
import { cardinalityOf, type AllowedValue, type PropertyDefinition, type StructuredProperties } from '../../../properties/types.ts';
import { aspectOf, entityRef, forgetEntity, type EntityRef, type GraphQLContext } from '../context.ts';
import { allowedValues, typedValues, type AllowedValueInput, type ValueInput } from '../inputs.ts';
import { propertyValue, structuredPropertiesOf } from './entityResolvers.ts';
import { propertyTarget } from '../../../properties/propertyService.ts';

interface CreateInput {
  id?: string | null;
  qualifiedName?: string | null;
  displayName?: string | null;
  description?: string | null;
  immutable?: boolean | null;
  valueType: string;
  typeQualifier?: { allowedTypes?: string[] | null } | null;
  allowedValues?: AllowedValueInput[] | null;
  cardinality?: 'SINGLE' | 'MULTIPLE' | null;
  entityTypes: string[];
}

interface UpdateInput {
  urn: string;
  displayName?: string | null;
  description?: string | null;
  immutable?: boolean | null;
  typeQualifier?: { newAllowedTypes?: string[] | null } | null;
  newAllowedValues?: AllowedValueInput[] | null;
  setCardinalityAsMultiple?: boolean | null;
  newEntityTypes?: string[] | null;
}

interface UpsertInput {
  assetUrn: string;
  structuredPropertyInputParams: { structuredPropertyUrn: string; values: ValueInput[] }[];
}

/** Only the fields given (GraphQL's null is "not given"): what is stored echoes what was sent. */
function given<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as { [K in keyof T]?: Exclude<T[K], null> };
}

/** `work`, with a denial (FORBIDDEN) given DataHub's `message` instead, keeping what the operation needs as detail. */
async function deniedAs<T>(message: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SvcError && err.code === 'FORBIDDEN') throw new SvcError('FORBIDDEN', message, { detail: err.detail, cause: err });
    throw err;
  }
}

/** DataHub's line for a caller not allowed to manage structured properties (`Unable to create structured property. Please contact your admin.`). */
const asManager = <T>(verb: 'create' | 'update' | 'delete', work: () => Promise<T>): Promise<T> => deniedAs(`Unable to ${verb} structured property. Please contact your admin.`, work);

/** DataHub's line (its typo kept) for a caller not allowed to change an asset's values. */
const asEditor = <T>(assetUrn: string, work: () => Promise<T>): Promise<T> => deniedAs(`Not authorized to update properties on the gives urn ${assetUrn}`, work);

async function definitionOf(ctx: GraphQLContext, ref: EntityRef): Promise<PropertyDefinition> {
  const definition = await aspectOf<PropertyDefinition>(ctx, ref.urn, 'propertyDefinition');
  if (!definition) throw SvcError.notFound(`Structured property ${ref.urn} has no definition`);
  return definition;
}

export const propertyResolvers = {
  Query: {
    async structuredProperty(_: unknown, { urn }: { urn: string }, ctx: GraphQLContext): Promise<EntityRef | null> {
      const ref = { urn, target: propertyTarget(urn) };
      return (await aspectOf(ctx, urn, 'propertyDefinition')) ? ref : null;
    },
  },
  Mutation: {
    async createStructuredProperty(_: unknown, { input }: { input: CreateInput }, ctx: GraphQLContext): Promise<EntityRef> {
      const v = new Violations();
      const { id, allowedValues: allowed, typeQualifier, ...rest } = given(input);
      const definition: Omit<PropertyDefinition, 'qualifiedName'> & { qualifiedName?: string } = { ...rest, valueType: input.valueType, entityTypes: input.entityTypes };
      const values = allowedValues(allowed, 'allowedValues', v);
      if (values) definition.allowedValues = values;
      if (typeQualifier?.allowedTypes) definition.typeQualifier = { allowedTypes: typeQualifier.allowedTypes };
      v.throwIfAny();
      const urn = await asManager('create', () => ctx.catalog.properties.create(ctx.principal, { id, definition }));
      forgetEntity(ctx, urn);
      return entityRef(urn);
    },
    async updateStructuredProperty(_: unknown, { input }: { input: UpdateInput }, ctx: GraphQLContext): Promise<EntityRef> {
      const v = new Violations();
      const newAllowedValues = allowedValues(input.newAllowedValues, 'newAllowedValues', v);
      v.throwIfAny();
      const { urn, displayName, description, immutable, setCardinalityAsMultiple, newEntityTypes } = given(input);
      await asManager('update', () =>
        ctx.catalog.properties.update(ctx.principal, input.urn, {
          ...given({ displayName, description, immutable, setCardinalityAsMultiple, newEntityTypes, newAllowedValues }),
          ...(input.typeQualifier?.newAllowedTypes ? { newAllowedTypes: input.typeQualifier.newAllowedTypes } : {}),
        }),
      );
      forgetEntity(ctx, urn!);
      return entityRef(input.urn);
    },
    async upsertStructuredProperties(_: unknown, { input }: { input: UpsertInput }, ctx: GraphQLContext) {
      const v = new Violations();
      const assignments = input.structuredPropertyInputParams.map((p, i) => ({
        propertyUrn: p.structuredPropertyUrn,
        values: typedValues(p.values, `structuredPropertyInputParams[${i}].values`, v),
      }));
      v.throwIfAny();
      const written = await asEditor(input.assetUrn, () => ctx.catalog.properties.upsertValues(ctx.principal, input.assetUrn, assignments));
      forgetEntity(ctx, input.assetUrn);
      return structuredPropertiesOf(input.assetUrn, written.stored.value as StructuredProperties);
    },
    async removeStructuredProperties(_: unknown, { input }: { input: { assetUrn: string; structuredPropertyUrns: string[] } }, ctx: GraphQLContext) {
      const written = await asEditor(input.assetUrn, () => ctx.catalog.properties.removeValues(ctx.principal, input.assetUrn, input.structuredPropertyUrns));
      forgetEntity(ctx, input.assetUrn);
      return structuredPropertiesOf(input.assetUrn, written.stored.value as StructuredProperties);
    },
    async deleteStructuredProperty(_: unknown, { input }: { input: { urn: string } }, ctx: GraphQLContext): Promise<boolean> {
      await asManager('delete', () => ctx.catalog.properties.delete(ctx.principal, input.urn));
      forgetEntity(ctx, input.urn);
      return true;
    },
  },
  StructuredPropertyEntity: {
    definition: (ref: EntityRef, _: unknown, ctx: GraphQLContext) => definitionOf(ctx, ref),
  },
  StructuredPropertyDefinition: {
    cardinality: cardinalityOf,
    valueType: (d: PropertyDefinition) => entityRef(d.valueType),
    entityTypes: (d: PropertyDefinition) => d.entityTypes.map(entityRef),
    typeQualifier: (d: PropertyDefinition) => (d.typeQualifier ? { allowedTypes: (d.typeQualifier.allowedTypes ?? []).map(entityRef) } : null),
    allowedValues: (d: PropertyDefinition) => d.allowedValues?.map((a: AllowedValue) => ({ value: propertyValue(a.value), description: a.description ?? null })) ?? null,
    immutable: (d: PropertyDefinition) => d.immutable ?? false,
    created: (d: PropertyDefinition) => auditStamp(d.created),
    lastModified: (d: PropertyDefinition) => auditStamp(d.lastModified),
  },
};

/** A stored audit stamp (`{time, actor}`) as a ResolvedAuditStamp; null when absent. */
function auditStamp(stamp: unknown): { time: number; actor: EntityRef | null } | null {
  const s = stamp as { time?: unknown; actor?: unknown } | undefined;
  if (typeof s?.time !== 'number') return null;
  let actor: EntityRef | null = null;
  if (typeof s.actor === 'string') {
    try {
      actor = entityRef(s.actor);
    } catch {
      actor = null;
    }
  }
  return { time: s.time, actor };
}
