/**
 * What every resolver gets: the caller's principal, the catalog, and a per-request entity loader that
 * batches the entity reads of one request's resolvers into one `getMany` per tick (DataLoader).
 */
import DataLoader from 'dataloader';
import type { Principal } from '../../auth/authorize.ts';
import type { Catalog } from '../../catalog.ts';
import type { EntityRecord } from '../../entities/entityService.ts';
import { registry, type EntityUrn } from '../../registry/registry.ts';
import { GRAPHQL_INPUT_LIMITS } from './limits.ts';

/**
 * The aspects GraphQL reads of an entity: every versioned one (its fields are built from them); time
 * series aspects are not shown in GraphQL, so reading them would cost a query for nothing.
 */
export const GRAPHQL_ASPECTS = [...new Set(registry.entities.flatMap((e) => registry.aspectsOf(e)).filter((a) => !a.timeseries).map((a) => a.name))];

export interface GraphQLContext {
  principal: Principal;
  catalog: Catalog;
  /** An entity with its {@link GRAPHQL_ASPECTS}, as reads show them (null: it does not exist). */
  entities: DataLoader<string, EntityRecord | null>;
  /** Entities a search read with some of their aspects only (see {@link primeEntity}), and those aspects. */
  primed: Map<string, { record: EntityRecord; aspects: ReadonlySet<string> }>;
  /** How many more search results this request may ask for (see searchResolvers.ts and limits.ts). */
  searchResultsLeft: number;
}

/** An entity as resolvers pass it on: its URN parsed; its aspects are read when a field needs them. */
export interface EntityRef {
  urn: string;
  target: EntityUrn;
}

/** A reference to the entity of a URN; INVALID_URN when it does not parse. */
export function entityRef(urn: string): EntityRef {
  return { urn, target: registry.resolveUrn(urn) };
}

export function createContext(catalog: Catalog, principal: Principal): GraphQLContext {
  return {
    principal,
    catalog,
    entities: new DataLoader(
      async (urns: readonly string[]) => {
        const records = await catalog.entities.getMany(principal, urns.map((u) => registry.resolveUrn(u)), GRAPHQL_ASPECTS);
        const byUrn = new Map(records.map((r) => [r.urn, r]));
        return urns.map((u) => byUrn.get(u) ?? null);
      },
      { maxBatchSize: 100 },
    ),
    primed: new Map(),
    searchResultsLeft: GRAPHQL_INPUT_LIMITS.searchResults,
  };
}

/**
 * Gives the loader an entity already read (by a search) with the given aspects only: a field that
 * needs another of its aspects reads the entity again, whole.
 */
export function primeEntity(ctx: GraphQLContext, record: EntityRecord, aspects: ReadonlySet<string>): void {
  ctx.entities.prime(record.urn, record);
  ctx.primed.set(record.urn, { record, aspects });
}

/** Drops what the loader holds of an entity, so that a read after a write of this request sees the write. */
export function forgetEntity(ctx: GraphQLContext, urn: string): void {
  ctx.entities.clear(urn);
  ctx.primed.delete(urn);
}

/**
 * The latest value of an aspect of the entity (undefined when the entity or the aspect is absent): at
 * once when a search read it (a page of results resolves without a promise per entity), else through
 * the loader.
 */
export function aspectOf<T>(ctx: GraphQLContext, urn: string, aspect: string): T | undefined | Promise<T | undefined> {
  const primed = ctx.primed.get(urn);
  if (primed?.aspects.has(aspect)) return primed.record.aspects.get(aspect)?.value as T | undefined;
  if (primed) forgetEntity(ctx, urn);
  return ctx.entities.load(urn).then((record) => record?.aspects.get(aspect)?.value as T | undefined);
}

/** `f` of a value, or of a promised value once it is there. */
export function then<T, R>(value: T | Promise<T>, f: (v: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value);
}
