/**
 * The system update of search (`npm run system-update`, run by the Helm chart and the operator on
 * install and upgrade): creates every index and its mappings, idempotently, one run at a time across
 * processes (a Postgres advisory lock: a second run waits for the first, then finds nothing to do).
 *
 * - `ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE=true`: the mappings of every active (defined, not
 *   soft-deleted) structured property are put in place for its entity types.
 * - with `ELASTICSEARCH_INDEX_BUILDER_MAPPINGS_REINDEX=true` as well: in `opensearch` mode, each index
 *   that maps a field it must not (a hard-deleted property whose values are all cleaned up, a
 *   soft-deleted one, a field whose type changed) is rebuilt into a new index and its alias swapped, as
 *   a durable task run by the servers (indexRebuild.ts; the run queues it and exits); in `postgres`
 *   mode, the search tables are rebuilt from the primary store (as `restoreIndices`).
 * - `restoreIndices`: every entity's document is rebuilt from the primary store (Postgres is the system
 *   of record). This is how a switch from `postgres` to `opensearch` is done: set the new backend, run
 *   `npm run system-update -- --restore-indices`, then start the servers.
 */
import { query, type Pool } from '../db/pool.ts';
import type { Logger } from '../shared/log.ts';
import { allProperties } from '../properties/propertyStore.ts';
import { ENTITIES } from '../contract/entities.ts';
import type { SearchBackend } from './backend.ts';
import { propertyEntityTypes, propertyField } from './fields.ts';
import type { OpenSearchBackend } from './opensearchBackend.ts';
import type { SearchOutbox } from './outbox.ts';

export interface SystemUpdateOptions {
  structuredProperties: boolean;
  reindexMappings: boolean;
  restoreIndices: boolean;
}

export interface SystemUpdateReport {
  indices: number;
  propertyMappings: number;
  restored: number;
  /** Index rebuilds queued (or already queued), as tasks of `/api/tasks`. */
  rebuilds: { entityType: string; task: number; drop: string[] }[];
}

export async function systemUpdate(pool: Pool, backend: SearchBackend, outbox: SearchOutbox, log: Logger, opts: SystemUpdateOptions): Promise<SystemUpdateReport> {
  const client = await pool.connect();
  try {
    // One run at a time; a second one waits, then finds everything in place.
    await client.query("SELECT pg_advisory_lock(hashtextextended('search:system-update', 0))");
    const types = ENTITIES.map((e) => e.name);
    await backend.prepare(types);
    const report: SystemUpdateReport = { indices: types.length, propertyMappings: 0, restored: 0, rebuilds: [] };
    if (opts.structuredProperties) {
      for (const state of (await allProperties(client)).values()) {
        const field = propertyField(state.definition);
        if (!field || state.softDeleted) continue;
        for (const type of propertyEntityTypes(state.definition)) {
          await backend.ensureFields(type, [field]);
          report.propertyMappings++;
        }
      }
    }
    if (opts.reindexMappings && opts.structuredProperties && backend.kind === 'opensearch') {
      // Loaded in `opensearch` mode only, as the server loads OpenSearch's modules (catalog.ts).
      const { fieldsToDrop, queueRebuild } = await import('./indexRebuild.ts');
      const opensearch = backend as OpenSearchBackend;
      for (const type of types) {
        const drop = await fieldsToDrop(client, opensearch, type);
        if (drop.length === 0) continue;
        const task = await queueRebuild(pool, opensearch, type);
        report.rebuilds.push({ entityType: type, task, drop });
        log.info({ entityType: type, task, drop }, `index rebuild queued: follow it at /api/tasks/${task}`);
      }
    }
    if (opts.restoreIndices || (opts.reindexMappings && opts.structuredProperties && backend.kind === 'postgres')) {
      const [r] = await query<{ n: string }>(
        client,
        "WITH q AS (INSERT INTO search_outbox (urn) SELECT urn FROM aspects WHERE version = 0 AND aspect LIKE '%Key' ORDER BY urn RETURNING 1) SELECT count(*) AS n FROM q",
        [],
      );
      report.restored = Number(r!.n);
      log.info({ entities: report.restored }, 'rebuilding every search document from the primary store');
      await outbox.deliverAll(30 * 60_000);
    }
    await backend.refresh();
    return report;
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtextextended('search:system-update', 0))").catch(() => undefined);
    client.release();
  }
}
