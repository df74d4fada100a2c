/**
 * Reads of structured properties' state (definition, soft delete, version) and the record of their
 * assignments, `structured_property_assignments`: for each property set on an entity, the definition
 * version its values were written under. Triggers keep it, in the statement that writes the
 * structuredProperties row (db/migrations/R__svc_record_inserted_assignments.sql,
 * R__svc_record_assignments.sql).
 */
import { query as rows, type Db } from '../db/pool.ts';
import { lockEntity } from '../db/locks.ts';
import type { ReadForWrite } from '../entities/aspectStore.ts';
import { isRemoved } from '../entities/softDelete.ts';
import { searchName, type PropertyDefinition } from './types.ts';
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
      "SELECT urn, aspect, metadata FROM svc_latest_rows($1, ARRAY['propertyDefinition', 'status'])",
      [[...new Set(propertyUrns)]],
      // Each row found by key (db/migrations/R__svc_latest_rows.sql); not prepared: off the hot path.
    ),
  );
}

/** Every structured property that has a definition, with its state. */
export async function allProperties(db: Db): Promise<Map<string, PropertyState>> {
  return statesFrom(
    await rows<{ urn: string; aspect: string; metadata: unknown }>(
      db,
      "SELECT urn, aspect, metadata FROM aspects WHERE urn LIKE 'urn:li:structuredProperty:%' AND version = 0 AND aspect IN ('propertyDefinition', 'status') ORDER BY urn",
      [],
    ),
  );
}

/**
 * The properties whose qualified name is one of `qualifiedNames`, or becomes one of `fieldNames` with
 * its dots replaced by underscores (how search names unversioned properties), with their state.
 */
export async function findProperties(db: Db, qualifiedNames: string[], fieldNames: string[]): Promise<Map<string, PropertyState>> {
  if (qualifiedNames.length === 0 && fieldNames.length === 0) return new Map();
  // One round trip, prepared, in a function planned with index lookups (R__svc_find_properties.sql):
  // planning this statement (expression indexes) costs ten times running it.
  return statesFrom(
    await rows<{ urn: string; aspect: string; metadata: unknown }>(
      db,
      'SELECT urn, aspect, metadata FROM svc_find_properties($1::text[], $2::text[])',
      [qualifiedNames, fieldNames],
      'svc_find_properties',
    ),
  );
}

/** What a propertyDefinition write checks besides the definition itself (see {@link loadDefinitionContexts}). */
export interface DefinitionContext {
  /**
   * The other properties whose definitions hold the qualified name or another with the same search
   * name (`col.a_b` and `col_a.b`, see types.searchName), soft-deleted ones included.
   */
  holders: { urn: string; qualifiedName: string }[];
  /** An open hard-delete task of this property, of its qualified name or of one with the same search name. */
  cleanup: { id: number; subject: string; qualifiedName: string | null; done: number; total: number | null } | undefined;
  softDeleted: boolean;
  dataTypes: Set<string>;
  entityTypes: Set<string>;
  /** The qualified names the holders and tasks were read for. */
  names: Set<string>;
  /** The property's status row as stored (metadata text; null: absent). */
  statusText: string | null;
  /** Key rows of the data types and entity types, as stored: URN → metadata text. */
  typeTexts: Map<string, string>;
}

/**
 * Takes the lock of a qualified name, shared by every name with the same search name, until the
 * transaction ends: a write creating a property claims its name under it, so two definitions cannot
 * claim one name, nor one search field, at once.
 */
export async function lockQualifiedName(tx: Db, qualifiedName: string): Promise<void> {
  await lockEntity(tx, `qualifiedName:${searchName(qualifiedName)}`);
}

/**
 * What propertyDefinition writes check, for several properties in one round trip and one snapshot
 * (db/migrations/R__svc_definition_write_contexts.sql): each stored definition, status, the holders of
 * the given qualified names and of those with the same search names, open hard-delete tasks, and the
 * data and entity types. Read without locks, the write statement checks that what the decision relied
 * on is unchanged (see entities/writeStatement.ts); a write creating a property reads it under
 * {@link lockQualifiedName}.
 */
export async function loadDefinitionContexts(
  db: Db,
  requests: { urn: string; qualifiedName: string | undefined }[],
  cleanupKind: string,
): Promise<(ReadForWrite & { state: DefinitionContext })[]> {
  const names = [...new Set(requests.map((r) => r.qualifiedName).filter((n): n is string => typeof n === 'string'))];
  const rs = await rows<{ kind: string; urn: string; a: string | null; b: string | null; c: string | null; at: Date | null; id: number | null; done: number | null; total: number | null }>(
    db,
    'SELECT kind, urn, a, b, c, at, id, done, total FROM svc_definition_write_contexts($1, $2, $3)',
    [[...new Set(requests.map((r) => r.urn))], names, cleanupKind],
    'svc_definition_write_contexts',
  );
  const stored = new Map<string, ReadForWrite>();
  const statuses = new Map<string, string>();
  const holders: { urn: string; name: string }[] = [];
  const tasks: { id: number; subject: string; name: string | null; done: number; total: number | null }[] = [];
  const dataTypes = new Set<string>();
  const entityTypes = new Set<string>();
  const typeTexts = new Map<string, string>();
  for (const r of rs) {
    if (r.kind === 's') {
      stored.set(r.urn, {
        token: `${r.b} ${r.c}`,
        previous: { urn: r.urn, aspect: 'propertyDefinition', version: 0, value: JSON.parse(r.b!), systemMetadata: JSON.parse(r.c!), createdOn: r.at!, createdBy: r.a! },
      });
    } else if (r.kind === 'st') statuses.set(r.urn, r.b!);
    else if (r.kind === 'h') holders.push({ urn: r.urn, name: r.a! });
    else if (r.kind === 't') tasks.push({ id: r.id!, subject: r.urn, name: r.a, done: r.done!, total: r.total });
    else {
      (r.kind === 'd' ? dataTypes : entityTypes).add(r.urn);
      typeTexts.set(r.urn, r.b!);
    }
  }
  tasks.sort((x, y) => x.id - y.id);
  return requests.map((r) => {
    const statusText = statuses.get(r.urn) ?? null;
    const name = r.qualifiedName === undefined ? undefined : searchName(r.qualifiedName);
    const cleanup = tasks.find((t) => t.subject === r.urn || (name !== undefined && t.name !== null && searchName(t.name) === name));
    return {
      ...(stored.get(r.urn) ?? { previous: undefined, token: null }),
      state: {
        holders: holders.filter((h) => name !== undefined && searchName(h.name) === name && h.urn !== r.urn).map((h) => ({ urn: h.urn, qualifiedName: h.name })),
        cleanup: cleanup && { id: cleanup.id, subject: cleanup.subject, qualifiedName: cleanup.name, done: cleanup.done, total: cleanup.total },
        softDeleted: statusText !== null && isRemoved(JSON.parse(statusText)),
        dataTypes,
        entityTypes,
        names: new Set(names),
        statusText,
        typeTexts,
      },
    };
  });
}

/** entity URN → property URN → the definition version its values were written under. */
export type RecordedVersions = Map<string, Map<string, string>>;

/**
 * A row of a read context (db/migrations/R__svc_property_read_contexts.sql): `p`, the visibility of the
 * properties (`c`: `<property URN> US <aspect> US <version, or 't' when soft deleted>` per definition
 * and status), or `r`, the assignment record (`c`: `<entity URN> US <property URN> US <definition
 * version>` per assignment); records separated by RS. One row each, aggregated in Postgres: a page's
 * few dozen assignments cost one row to parse, not one each.
 */
export interface ReadContextRow {
  kind: string;
  a: string | null;
  b: string | null;
  c: string | null;
}

/** What showing a property's values depends on: its definition's version and whether it is soft deleted. */
export interface PropertyVisibility {
  version: string;
  softDeleted: boolean;
}

export type ReadContext = { properties: Map<string, PropertyVisibility>; recorded: RecordedVersions };

/**
 * What reads need to hide values, in one round trip: the visibility of the properties the entities
 * hold and the versions their values were written under. (A property in a row without its record is
 * not shown whatever its state, so the record names every property whose state matters.)
 */
export async function loadReadContext(db: Db, urns: string[]): Promise<ReadContext> {
  return readContextOf(await rows<ReadContextRow>(db, 'SELECT * FROM svc_property_read_contexts($1)', [urns], 'svc_property_read_contexts'));
}

/**
 * The same read context, as SQL over `read` (the structuredProperties rows being read: urn, aspect,
 * metadata) to run in the statement that reads them: one round trip and one snapshot for both.
 */
export const READ_CONTEXT_SQL = "SELECT * FROM svc_property_read_contexts(ARRAY(SELECT urn FROM read WHERE aspect = 'structuredProperties'))";

export function readContextOf(rs: ReadContextRow[]): ReadContext {
  const recorded: RecordedVersions = new Map();
  const versions = new Map<string, string>();
  const removed = new Set<string>();
  for (const r of rs) {
    if (!r.c) continue;
    for (const item of r.c.split('\x1e')) {
      const [a, b, c] = item.split('\x1f') as [string, string, string];
      if (r.kind === 'r') {
        if (!recorded.has(a)) recorded.set(a, new Map());
        recorded.get(a)!.set(b, c);
      } else if (b === 'propertyDefinition') versions.set(a, c);
      else if (c === 't') removed.add(a);
    }
  }
  // A status without a definition is no property (as in statesFrom).
  const properties = new Map([...versions].map(([urn, version]) => [urn, { version, softDeleted: removed.has(urn) }]));
  return { properties, recorded };
}

/**
 * The records of older versions of entities' structuredProperties rows
 * (db/migrations/R__svc_keep_assignment_history.sql): for each given row (entity URN and version, 1 or
 * more), property URN → the definition version its values were written under. A row absent from the
 * result has no record.
 */
export async function loadHistoricRecords(db: Db, rowsOf: { urn: string; version: number }[]): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  if (rowsOf.length === 0) return out;
  const rs = await rows<{ entity_urn: string; aspect_version: number; property_urn: string; definition_version: string }>(
    db,
    `SELECT h.entity_urn, h.aspect_version, h.property_urn, h.definition_version
       FROM structured_property_assignment_history h JOIN unnest($1::text[], $2::bigint[]) AS r(urn, version)
         ON h.entity_urn = r.urn AND h.aspect_version = r.version`,
    [rowsOf.map((r) => r.urn), rowsOf.map((r) => r.version)],
  );
  for (const r of rs) {
    const key = historicKey(r.entity_urn, r.aspect_version);
    if (!out.has(key)) out.set(key, new Map());
    out.get(key)!.set(r.property_urn, r.definition_version);
  }
  return out;
}

/**
 * Drops a property from the records of older versions: a hard-deleted property's values in history
 * rows are then never shown again, also once a property of the same URN is created anew (a row's
 * property without a record is hidden).
 */
export async function forgetHistoricRecords(db: Db, propertyUrn: string): Promise<void> {
  await rows(db, 'DELETE FROM structured_property_assignment_history WHERE property_urn = $1', [propertyUrn]);
}

/** The key of a row in {@link loadHistoricRecords}' result. */
export const historicKey = (urn: string, version: number) => `${version} ${urn}`;

export interface WriteContext {
  /** The entity's key aspect row (metadata text); undefined when the entity does not exist. */
  entityKey: string | undefined;
  properties: Map<string, PropertyState>;
  /** property URN → the definition version the entity's values were written under. */
  recorded: Map<string, string>;
  /** The rows the states come from, as stored: `<property URN> <aspect>` → metadata text. */
  texts: Map<string, string>;
}

/** What a structuredProperties write reads before it is checked: the entity, its key aspect, the properties it names. */
export interface WriteContextRequest {
  urn: string;
  keyAspect: string;
  named: string[];
}

/**
 * Everything structuredProperties writes need, for several entities in one round trip and one
 * snapshot: each aspect's stored row, whether each entity exists, the state of the properties each
 * write names and of those its stored value holds (and the rows it comes from, for the write statement
 * to check they did not change), and the versions each entity's values were written under.
 */
export async function loadWriteContexts(db: Db, aspect: string, requests: WriteContextRequest[]): Promise<(ReadForWrite & { state: WriteContext })[]> {
  // One function call (db/migrations/R__svc_property_write_contexts.sql): the query's plan is made once
  // per connection.
  const rs = await rows<{ kind: string; urn: string; a: string | null; b: string | null; c: string | null; at: Date | null }>(
    db,
    'SELECT kind, urn, a, b, c, at FROM svc_property_write_contexts($1, $2, $3, $4)',
    [[...new Set(requests.map((r) => r.urn))], [...new Set(requests.map((r) => r.keyAspect))], aspect, [...new Set(requests.flatMap((r) => r.named))]],
    'svc_property_write_contexts',
  );
  // Concurrent writes of one entity share its read.
  const byUrn = new Map<string, ReadForWrite & { state: WriteContext }>();
  for (const r of requests) {
    if (!byUrn.has(r.urn)) byUrn.set(r.urn, { previous: undefined, token: null, state: { entityKey: undefined, properties: new Map(), recorded: new Map(), texts: new Map() } });
  }
  const states: { urn: string; aspect: string; metadata: unknown }[] = [];
  const texts = new Map<string, string>();
  for (const r of rs) {
    if (r.kind === 'p') {
      states.push({ urn: r.urn, aspect: r.a!, metadata: JSON.parse(r.b!) });
      texts.set(`${r.urn} ${r.a}`, r.b!);
      continue;
    }
    const read = byUrn.get(r.urn)!;
    if (r.kind === 's') {
      // The token is what the write statement compares: `<metadata> <system_metadata>` as stored.
      read.token = `${r.b} ${r.c}`;
      read.text = r.b!;
      read.previous = { urn: r.urn, aspect, version: 0, value: JSON.parse(r.b!), systemMetadata: JSON.parse(r.c!), createdOn: r.at!, createdBy: r.a! };
    } else if (r.kind === 'e') read.state.entityKey = r.c!;
    else read.state.recorded.set(r.a!, r.b ?? '');
  }
  // The property states are shared: each write sees those of every property read for the group.
  const properties = statesFrom(states);
  for (const read of byUrn.values()) {
    read.state.properties = properties;
    read.state.texts = texts;
  }
  return requests.map((r) => byUrn.get(r.urn)!);
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
