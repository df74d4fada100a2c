/**
 * Reads of structured properties' state (definition, soft delete, version) and the record of their
 * assignments, `structured_property_assignments`: for each property set on an entity, the definition
 * version its values were written under (see migration 007).
 */
import { query as rows, type Db } from '../db/pool.ts';
import { isRemoved } from '../entities/softDelete.ts';
import type { PropertyDefinition } from './types.ts';
import type { PropertyState } from './valueRules.ts';

/** Property states from `propertyDefinition` and `status` rows. */
function statesFrom(rs: { urn: string; aspect: string; metadata: unknown }[]): Map<string, PropertyState> {
  const out = new Map<string, PropertyState>();
  for (const r of rs) if (r.aspect === 'propertyDefinition') out.set(r.urn, { definition: r.metadata as PropertyDefinition, softDeleted: false });
  for (const r of rs) {
    const state = r.aspect === 'status' ? out.get(r.urn) : undefined;
    if (state) state.softDeleted = isRemoved(r.metadata);
  }
  return out;
}

/** The state of each given property that has a definition (absent from the map: no such property). */
export async function loadProperties(db: Db, propertyUrns: string[]): Promise<Map<string, PropertyState>> {
  if (propertyUrns.length === 0) return new Map();
  return statesFrom(
    await rows<{ urn: string; aspect: string; metadata: unknown }>(
      db,
      "SELECT urn, aspect, metadata FROM aspects WHERE urn = ANY($1) AND version = 0 AND aspect IN ('propertyDefinition', 'status')",
      [[...new Set(propertyUrns)]],
    ),
  );
}

/** Whether a property is soft deleted. */
export async function isSoftDeleted(db: Db, propertyUrn: string): Promise<boolean> {
  const rs = await rows<{ metadata: unknown }>(db, "SELECT metadata FROM aspects WHERE urn = $1 AND aspect = 'status' AND version = 0", [propertyUrn]);
  return isRemoved(rs[0]?.metadata);
}

/** URNs of the existing entities of one type, e.g. every `dataType` (they are few: bootstrapped). */
export async function existingUrns(db: Db, keyAspect: string): Promise<Set<string>> {
  const rs = await rows<{ urn: string }>(db, 'SELECT urn FROM aspects WHERE aspect = $1 AND version = 0', [keyAspect]);
  return new Set(rs.map((r) => r.urn));
}

/**
 * Another live property holding a qualified name, if any. Takes a lock on the name first, so two
 * definitions cannot claim it at once.
 */
export async function qualifiedNameHolder(db: Db, qualifiedName: string, urn: string): Promise<string | undefined> {
  await rows(db, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`qualifiedName:${qualifiedName}`]);
  const rs = await rows<{ urn: string }>(
    db,
    `SELECT urn FROM aspects
      WHERE aspect = 'propertyDefinition' AND version = 0 AND (metadata::jsonb) ->> 'qualifiedName' = $1 AND urn <> $2 LIMIT 1`,
    [qualifiedName, urn],
  );
  return rs[0]?.urn;
}

/** entity URN → property URN → the definition version its values were written under. */
export type RecordedVersions = Map<string, Map<string, string>>;

/**
 * What reads need to hide values, in one round trip: the state of the referenced properties and the
 * versions the entities' values were written under.
 */
export async function loadReadContext(db: Db, urns: string[], propertyUrns: string[]): Promise<{ properties: Map<string, PropertyState>; recorded: RecordedVersions }> {
  const rs = await rows<{ kind: string; a: string; b: string; c: string | null }>(
    db,
    `SELECT 'p' AS kind, urn AS a, aspect AS b, metadata::text AS c FROM aspects
      WHERE urn = ANY($2) AND version = 0 AND aspect IN ('propertyDefinition', 'status')
     UNION ALL
     SELECT 'v', entity_urn, property_urn, definition_version FROM structured_property_assignments WHERE entity_urn = ANY($1)`,
    [urns, [...new Set(propertyUrns)]],
  );
  const recorded: RecordedVersions = new Map();
  const states: { urn: string; aspect: string; metadata: unknown }[] = [];
  for (const r of rs) {
    if (r.kind === 'v') {
      if (!recorded.has(r.a)) recorded.set(r.a, new Map());
      recorded.get(r.a)!.set(r.b, r.c ?? '');
    } else states.push({ urn: r.a, aspect: r.b, metadata: JSON.parse(r.c!) });
  }
  const properties = statesFrom(states);
  return { properties, recorded };
}

export interface WriteContext {
  entityExists: boolean;
  properties: Map<string, PropertyState>;
  /** property URN → the definition version the entity's values were written under. */
  recorded: Map<string, string>;
}

/**
 * Everything a structuredProperties write of one entity needs, in one round trip: whether the entity
 * exists, the state of the referenced properties, and the versions its current values were written under.
 */
export async function loadWriteContext(db: Db, urn: string, keyAspect: string, propertyUrns: string[]): Promise<WriteContext> {
  const rs = await rows<{ kind: string; a: string; b: string | null; c: string | null }>(
    db,
    `SELECT 'e' AS kind, urn AS a, NULL AS b, NULL AS c FROM aspects WHERE urn = $1 AND aspect = $2 AND version = 0
     UNION ALL
     SELECT 'p', urn, aspect, metadata::text FROM aspects
      WHERE urn = ANY($3) AND version = 0 AND aspect IN ('propertyDefinition', 'status')
     UNION ALL
     SELECT 'v', property_urn, definition_version, NULL FROM structured_property_assignments WHERE entity_urn = $1`,
    [urn, keyAspect, [...new Set(propertyUrns)]],
  );
  const ctx: WriteContext = { entityExists: false, properties: new Map(), recorded: new Map() };
  const states: { urn: string; aspect: string; metadata: unknown }[] = [];
  for (const r of rs) {
    if (r.kind === 'e') ctx.entityExists = true;
    else if (r.kind === 'v') ctx.recorded.set(r.a, r.b ?? '');
    else states.push({ urn: r.a, aspect: r.b!, metadata: JSON.parse(r.c!) });
  }
  ctx.properties = statesFrom(states);
  return ctx;
}

/**
 * A page of entities holding values of a property (optionally only values written under an older
 * version, see versions.ts), in URN order after `after`.
 */
export async function entitiesWithValues(db: Db, propertyUrn: string, opts: { olderThan?: string; after?: string; limit: number }): Promise<string[]> {
  const rs = await rows<{ urn: string }>(
    db,
    `SELECT entity_urn AS urn FROM structured_property_assignments
      WHERE property_urn = $1 AND ($2::text IS NULL OR definition_version < $2) AND ($3::text IS NULL OR entity_urn > $3) ORDER BY entity_urn LIMIT $4`,
    [propertyUrn, opts.olderThan ?? null, opts.after ?? null, opts.limit],
  );
  return rs.map((r) => r.urn);
}

export async function countEntitiesWithValues(db: Db, propertyUrn: string, olderThan?: string): Promise<number> {
  const rs = await rows<{ n: number }>(
    db,
    'SELECT count(*)::int AS n FROM structured_property_assignments WHERE property_urn = $1 AND ($2::text IS NULL OR definition_version < $2)',
    [propertyUrn, olderThan ?? null],
  );
  return rs[0]!.n;
}
