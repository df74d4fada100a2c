/**
 * The dispatcher of the search outbox (migration 013): every write that changes what a search document
 * is built from adds the entity's URN to `search_outbox` in its own transaction; this loop takes the
 * oldest rows, rebuilds those entities' documents from the primary store, applies them to the backend
 * in one bulk, and deletes the rows it handled. A change is delivered at least once and the latest
 * state wins (documents are rebuilt, not patched), so a crash or a backend outage loses nothing: the
 * rows wait in Postgres until a dispatcher delivers them.
 *
 * One dispatcher works at a time across every process on the database: each step holds a
 * transaction-scoped advisory lock, so steps never interleave and documents are applied in order.
 * For a structured property, the step also compares what is indexed of it (field, type, entity types,
 * searchable) with its definition now; when that changed, every entity holding it is queued again.
 */
import { inTransaction, query, type Db, type Pool, type Tx } from '../db/pool.ts';
import { Listener } from '../db/listener.ts';
import type { EntityService } from '../entities/entityService.ts';
import type { Logger } from '../log.ts';
import { loadProperties } from '../properties/propertyStore.ts';
import type { SearchBackend } from './backend.ts';
import { buildDocuments } from './documents.ts';
import { propertyEntityTypes, propertyField, type FieldSpec } from './fields.ts';

export const SEARCH_CHANNEL = 'svc_search';
const STRUCTURED_PROPERTY = 'urn:li:structuredProperty:';
/** Rows one step takes. */
const BATCH = 500;
/**
 * While writes keep coming, a step that found fewer rows than this is followed by a pause (the
 * linger, `SVC_SEARCH_LINGER_MS`) before the next, for the writes of that time to go in one step: a
 * step costs about ten statements whatever its size, and steps of a few rows each, one per commit,
 * cost the writes beside them a tenth or more of their rate (see the README's performance section).
 * A write after an idle spell is delivered at once; under load a change waits at most the linger longer.
 */
export const LINGER_BELOW = 100;
/** How often an idle dispatcher looks without being woken (a missed notification, another process's lock). */
const POLL_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;

/** What the dispatcher needs of a time series store that lives outside Postgres. */
export interface TimeseriesShipper {
  /** Ships a batch of time series writes and deletions in the dispatcher's transaction; the number handled. */
  ship(tx: Tx): Promise<number>;
  /** Makes what was shipped visible to searches. */
  refresh(): Promise<void>;
}

export interface OutboxStats {
  /** Entities whose documents were applied (or removed). */
  delivered: number;
  /** Steps that delivered something (documents or time series entries). */
  steps: number;
  /** Steps that failed (backend unreachable, …) and were tried again. */
  failures: number;
}

/** The queue now: rows waiting, and the age of the oldest in seconds (0 when empty). */
export async function outboxLag(db: Db): Promise<{ depth: number; oldestSeconds: number }> {
  const [r] = await query<{ n: string; age: number | null }>(
    db,
    'SELECT count(*) AS n, extract(epoch FROM clock_timestamp() - min(queued_at))::float8 AS age FROM search_outbox',
    [],
  );
  return { depth: Number(r!.n), oldestSeconds: r!.age ?? 0 };
}

export class SearchOutbox {
  readonly stats: OutboxStats = { delivered: 0, steps: 0, failures: 0 };
  /** Rows and entries the last step delivered. */
  private lastDelivered = 0;
  /** Entities whose documents the last step applied or removed. */
  private lastEntities = 0;
  private stopping = false;
  private woken = false;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private listener: Listener | undefined;
  /** Entity types whose indices this process made sure exist. */
  private readonly prepared = new Set<string>();
  /** Fields known to exist in the backend, per entity type (`type\0field`). */
  private readonly knownFields = new Set<string>();

  constructor(
    private readonly pool: Pool,
    private readonly entities: EntityService,
    private readonly backend: SearchBackend,
    private readonly log: Logger,
    private readonly listenUrl?: string,
    /** In `opensearch` mode, the time series entries to ship (timeseries/opensearchStore.ts), in the same steps. */
    private readonly timeseries?: TimeseriesShipper,
    /** The pause after a small step while writes keep coming (see LINGER_BELOW). */
    private readonly lingerMs = 0,
  ) {}

  start(): void {
    if (this.listenUrl) {
      this.listener ??= new Listener(this.listenUrl, SEARCH_CHANNEL, 'svc-search', this.log, () => this.kick());
      this.listener.start();
    }
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.kick();
    await this.running;
    await this.listener?.stop();
  }

  private kick(): void {
    this.woken = true;
    this.wake?.();
  }

  /**
   * Delivers everything queued (by this time) and makes it visible to searches before it resolves;
   * fails with the last error after `timeoutMs`.
   */
  async deliverAll(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let result: string;
      try {
        result = await this.step();
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(200);
        continue;
      }
      if (result === 'idle') {
        await this.timeseries?.refresh();
        return this.backend.refresh();
      }
      if (Date.now() > deadline) throw new Error(`the search outbox was not delivered within ${timeoutMs} ms (${result})`);
      if (result === 'busy') await sleep(50);
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    let lastWarning = 0;
    while (!this.stopping) {
      this.woken = false;
      let result: 'more' | 'idle' | 'busy';
      try {
        result = await this.step();
        if (failures > 0) this.log.info({ failures }, 'search outbox delivering again');
        failures = 0;
      } catch (err) {
        failures++;
        this.stats.failures++;
        if (Date.now() - lastWarning > 30_000) {
          lastWarning = Date.now();
          this.log.warn({ err, failures }, 'could not deliver search changes; they wait in the outbox and are retried');
        }
        await this.pause(Math.min(MAX_BACKOFF_MS, 100 * 2 ** failures) * (0.5 + Math.random()), false);
        continue;
      }
      if (result === 'more') {
        this.stats.steps++;
        await this.afterStep();
        const linger = lingerAfter(this.lastDelivered, this.lingerMs);
        if (linger > 0) await this.pause(linger, false);
        continue;
      }
      if (!this.woken) await this.pause(POLL_MS, true);
    }
  }

  /** Tells the backend what the step delivered (see SearchBackend.delivered); a failure there is the backend's, not the step's. */
  private async afterStep(): Promise<void> {
    const entities = this.lastEntities;
    this.lastEntities = 0;
    if (entities === 0 || !this.backend.delivered) return;
    try {
      await this.backend.delivered(entities);
    } catch (err) {
      this.log.warn({ err }, 'search backend: could not refresh after a step');
    }
  }

  /** Waits `ms`, or until woken (only by a stop unless `wakeable`). */
  private pause(ms: number, wakeable: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        if (!wakeable && !this.stopping) return;
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      this.wake = undefined;
    });
  }

  /** One batch: `more` when rows were delivered, `idle` when the outbox is empty, `busy` when another dispatcher works. */
  async step(): Promise<'more' | 'idle' | 'busy'> {
    return inTransaction(this.pool, async (tx) => {
      const [lock] = await query<{ ok: boolean }>(tx, "SELECT pg_try_advisory_xact_lock(hashtextextended('search:dispatcher', 0)) AS ok", []);
      if (!lock!.ok) return 'busy';
      const rows = await query<{ id: string; urn: string }>(tx, 'SELECT id, urn FROM search_outbox ORDER BY id LIMIT $1', [BATCH]);
      const shipped = (await this.timeseries?.ship(tx)) ?? 0;
      this.lastDelivered = rows.length + shipped;
      if (rows.length === 0) return shipped > 0 ? 'more' : 'idle';
      const urns = [...new Set(rows.map((r) => r.urn))];
      await this.propertiesChanged(tx, urns.filter((u) => u.startsWith(STRUCTURED_PROPERTY)));
      const { docs, gone } = await buildDocuments(this.entities, this.pool, urns);
      await this.prepare([...docs, ...gone].map((d) => d.entityType));
      for (const d of docs) {
        const missing: FieldSpec[] = [];
        for (const [name, f] of d.fields) if (!this.knownFields.has(`${d.entityType}\0${name}`)) missing.push({ name, type: f.type });
        if (missing.length) await this.ensureFields(d.entityType, missing);
      }
      await this.backend.apply(docs, gone, tx);
      await query(tx, 'DELETE FROM search_outbox WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
      this.stats.delivered += urns.length;
      this.lastEntities = urns.length;
      // Rows were delivered: look again (a property's holders may have been queued by this step).
      return 'more';
    });
  }

  /** Creates the indices of entity types as documents of them first come (system-update creates them all). */
  private async prepare(entityTypes: string[]): Promise<void> {
    const missing = [...new Set(entityTypes)].filter((t) => !this.prepared.has(t));
    if (missing.length === 0) return;
    await this.backend.prepare(missing);
    for (const t of missing) this.prepared.add(t);
  }

  private async ensureFields(entityType: string, fields: FieldSpec[]): Promise<void> {
    await this.prepare([entityType]);
    await this.backend.ensureFields(entityType, fields);
    for (const f of fields) this.knownFields.add(`${entityType}\0${f.name}`);
  }

  /**
   * Structured properties whose definition or status changed: their fields are added to the backend
   * for their entity types, and when what is indexed of them changed, their holders are queued again.
   */
  private async propertiesChanged(tx: Tx, urns: string[]): Promise<void> {
    if (urns.length === 0) return;
    const states = await loadProperties(tx, urns);
    const indexed = new Map(
      (await query<{ urn: string; field: string; field_type: string; entity_types: string[]; active: boolean }>(tx, 'SELECT * FROM search_properties WHERE urn = ANY($1::text[])', [urns])).map((r) => [
        r.urn,
        r,
      ]),
    );
    for (const urn of urns) {
      const state = states.get(urn);
      const field = state && propertyField(state.definition);
      const now = field && {
        field: field.name,
        field_type: field.type,
        entity_types: propertyEntityTypes(state.definition),
        active: !state.softDeleted,
      };
      if (now?.active) for (const type of now.entity_types) await this.ensureFields(type, [field!]);
      const before = indexed.get(urn);
      const same =
        before !== undefined &&
        now !== undefined &&
        before.field === now.field &&
        before.field_type === now.field_type &&
        before.active === now.active &&
        before.entity_types.join() === now.entity_types.join();
      // Gone (hard-deleted) after being inactive already: its values were hidden then.
      const goneInactive = now === undefined && (before === undefined || !before.active);
      if (same || goneInactive) continue;
      if (now) {
        await query(
          tx,
          `INSERT INTO search_properties (urn, field, field_type, entity_types, active) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (urn) DO UPDATE SET field = $2, field_type = $3, entity_types = $4, active = $5`,
          [urn, now.field, now.field_type, now.entity_types, now.active],
        );
      } else {
        // Hard-deleted: the row stays, inactive, so that a mapping rebuild knows the field of the values
        // its cleanup has not removed yet (indexRebuild.ts).
        await query(tx, 'UPDATE search_properties SET active = false WHERE urn = $1', [urn]);
      }
      // Every holder's document changes (values hidden, shown, or under another field).
      await query(tx, 'INSERT INTO search_outbox (urn) SELECT entity_urn FROM structured_property_assignments WHERE property_urn = $1', [urn]);
    }
  }
}

/** How long the dispatcher waits before its next step, after one that delivered `delivered` rows (see LINGER_BELOW). */
export function lingerAfter(delivered: number, lingerMs: number): number {
  return delivered > 0 && delivered < LINGER_BELOW ? lingerMs : 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
