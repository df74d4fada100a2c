/**
 * The dispatcher of the search outbox: every write that changes what a search document is built
 * from adds the entity's URN to `search_outbox` in its own transaction (triggers do, whichever path
 * wrote: db/migrations/R__svc_aspects_inserted.sql and R__svc_search_changed.sql); this loop takes the
 * oldest rows, rebuilds those entities' documents from the primary store, applies them to the backend
 * in one bulk, and deletes the rows of those entities (those queued since included: the documents are
 * built after the delete, from what is committed then). A change is delivered at least once and the latest
 * state wins (documents are rebuilt, not patched), so a crash or a backend outage loses nothing: the
 * rows wait in Postgres until a dispatcher delivers them.
 *
 * One dispatcher works at a time across every process on the database: each step holds a
 * transaction-scoped advisory lock, so steps never interleave and documents are applied in order.
 * For a structured property, the step also compares what is indexed of it (field, type, entity types,
 * searchable) with its definition now; when that changed, every entity holding it is queued again
 * (propertyFields.ts).
 *
 * No entity's document holds back the others (issue 48). A step that fails for a reason of the
 * backend's or the database's as a whole (unreachable, overloaded; deliveryErrors.ts) is retried whole
 * after a pause. Any other failure is taken to be an entity's: the step runs again with its entities
 * isolated (the batch halved under savepoints until the failing ones stand alone), delivers the rest,
 * and moves each failing entity from the outbox to `search_failures` (deliveryFailures.ts) in the same
 * transaction; there it is tried again with a growing pause, or at once when it changes again, until
 * delivered. An entity the backend refuses by itself (an OpenSearch bulk item) goes there directly.
 */
import { inSavepoint, inTransaction, query, type Pool, type Tx } from '../db/pool.ts';
import { Listener } from '../db/listener.ts';
import type { EntityService } from '../entities/entityService.ts';
import type { Logger } from '../shared/log.ts';
import type { SearchBackend } from './backend.ts';
import { describeFailure, isTransient } from './deliveryErrors.ts';
import { clearFailures, failuresToTry, recordFailures } from './deliveryFailures.ts';
import { buildDocuments } from './documents.ts';
import type { FieldSpec } from './fields.ts';
import { indexedPropertiesChanged } from './propertyFields.ts';

export const SEARCH_CHANNEL = 'svc_search';
const STRUCTURED_PROPERTY = 'urn:li:structuredProperty:';
/** Entities one step delivers at most. */
const BATCH = 500;
/**
 * Outbox rows read to find them: an entity written in one request is queued once per statement (its
 * key aspect and status, then its other aspects), and a step takes every row of its entities.
 */
const ROWS_PER_ENTITY = 3;
/**
 * Failing entities one step tries again when their pause is over: when all fail again (Postgres refuses
 * a statement, not a row), isolating them costs about twice as many tries.
 */
const RETRY_BATCH = 100;
/**
 * While writes keep coming, a step that found fewer rows than this is followed by a pause (the
 * linger, `SVC_SEARCH_LINGER_MS`) before the next, for the writes of that time to go in one step: a
 * step costs about ten statements whatever its size, and steps of a few rows each, one per commit,
 * cost the writes beside them a tenth or more of their rate (see docs/decisions/0016-search-dispatcher-linger.md).
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
  /** Tries of an entity's document that failed (the entity was recorded in search_failures). */
  entityFailures: number;
  /** Shipping steps of time series entries that failed for a reason not the backend's as a whole. */
  timeseriesFailures: number;
}

export class SearchOutbox {
  readonly stats: OutboxStats = { delivered: 0, steps: 0, failures: 0, entityFailures: 0, timeseriesFailures: 0 };
  /** Rows and entries the last step delivered. */
  private lastDelivered = 0;
  /** Entities whose documents the last step applied or removed. */
  private lastEntities = 0;
  private stopping = false;
  private woken = false;
  /** When a failure of time series shipping was last logged. */
  private lastShipWarning = 0;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private listener: Listener | undefined;
  /** Entity types whose indices this process made sure exist. */
  private readonly prepared = new Set<string>();
  /** Fields known to exist in the backend, per entity type (`type\0field`). */
  private readonly knownFields = new Set<string>();
  /** What the last step's transaction delivered, until it committed: its entities' ages when taken. */
  private lastAges: { ages: number[]; taken: number } | undefined;
  private readonly deliveryListeners: ((ageSeconds: number[]) => void)[] = [];

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

  /** Tells the backend that a step delivered documents (see SearchBackend.delivered); a failure there is the backend's, not the step's. */
  private async afterStep(): Promise<void> {
    const entities = this.lastEntities;
    this.lastEntities = 0;
    if (entities === 0 || !this.backend.delivered) return;
    try {
      await this.backend.delivered();
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

  /**
   * One batch: `more` when rows were delivered (or failing entities tried), `idle` when there was
   * nothing to do, `busy` when another dispatcher works. A failure that is not the backend's as a whole
   * runs the step again with its entities isolated (see the module comment).
   */
  async step(): Promise<'more' | 'idle' | 'busy'> {
    let result: 'more' | 'idle' | 'busy';
    try {
      result = await this.stepOnce(false);
    } catch (err) {
      if (isTransient(err)) throw err;
      result = await this.stepOnce(true);
    }
    this.afterCommit();
    return result;
  }

  /**
   * Tells the listeners how long the changes a committed step delivered had waited: from their commit
   * (the outbox row's time) to the step's commit. Entities tried again after failing are not counted
   * (GET /api/search/delivery lists them).
   */
  private afterCommit(): void {
    const last = this.lastAges;
    this.lastAges = undefined;
    if (!last || last.ages.length === 0 || this.deliveryListeners.length === 0) return;
    const since = (performance.now() - last.taken) / 1000;
    const ages = last.ages.map((a) => Math.max(0, a) + since);
    for (const listener of this.deliveryListeners) listener(ages);
  }

  /** Calls `listener` after each step with the seconds each entity it delivered had waited (svc_search_delivery_seconds). */
  onDelivered(listener: (ageSeconds: number[]) => void): void {
    this.deliveryListeners.push(listener);
  }

  private async stepOnce(isolate: boolean): Promise<'more' | 'idle' | 'busy'> {
    this.lastAges = undefined;
    return inTransaction(this.pool, async (tx) => {
      const [lock] = await query<{ ok: boolean }>(tx, "SELECT pg_try_advisory_xact_lock(hashtextextended('search:dispatcher', 0)) AS ok", []);
      if (!lock!.ok) return 'busy';
      const oldest = await query<{ urn: string }>(tx, 'SELECT urn FROM search_outbox ORDER BY id LIMIT $1', [BATCH * ROWS_PER_ENTITY]);
      const shipped = await this.ship(tx, isolate);
      const urns = [...new Set(oldest.map((r) => r.urn))].slice(0, BATCH);
      // Every change of these entities queued so far, not only the oldest: documents are rebuilt from
      // what is committed now, after this statement, so one delivery stands for all of them (an entity
      // written several times since it was last delivered, as in a load that writes its aspects apart).
      const rows = urns.length
        ? await query<{ urn: string; queued_at: Date; age: number }>(
            tx,
            'DELETE FROM search_outbox WHERE urn = ANY($1::text[]) RETURNING urn, queued_at, extract(epoch FROM clock_timestamp() - queued_at)::float8 AS age',
            [urns],
          )
        : [];
      const taken = performance.now();
      // Entities failing already are tried apart and isolated: whether they fail again or not, the batch
      // of the others is not halved for them.
      const failing = await failuresToTry(tx, urns, RETRY_BATCH);
      this.lastDelivered = rows.length + shipped;
      if (urns.length === 0 && failing.length === 0) return shipped > 0 ? 'more' : 'idle';
      const known = new Set(failing);
      const fresh = urns.filter((u) => !known.has(u));
      const refused = new Map<string, string>();
      if (fresh.length) for (const [urn, error] of isolate ? await this.deliverIsolated(tx, fresh) : await this.deliver(tx, fresh)) refused.set(urn, error);
      if (failing.length) for (const [urn, error] of await this.deliverIsolated(tx, failing)) refused.set(urn, error);
      await clearFailures(tx, failing.filter((u) => !refused.has(u)));
      if (refused.size) {
        const queuedAt = new Map<string, Date>();
        for (const r of rows) {
          const earlier = queuedAt.get(r.urn);
          if (refused.has(r.urn) && (earlier === undefined || r.queued_at < earlier)) queuedAt.set(r.urn, r.queued_at);
        }
        await recordFailures(tx, [...refused].map(([urn, error]) => ({ urn, error, queuedAt: queuedAt.get(urn) })));
        this.stats.entityFailures += refused.size;
        const [urn, error] = [...refused][0]!;
        this.log.warn({ failed: refused.size, urn, error }, 'search documents could not be delivered; their entities are tried again later (GET /api/search/delivery)');
      }
      const delivered = fresh.length + failing.length - refused.size;
      this.stats.delivered += delivered;
      this.lastEntities = delivered;
      // The age of each delivered entity's oldest change, when this step took it (see afterCommit).
      const ages = new Map<string, number>();
      for (const r of rows) if (!refused.has(r.urn) && r.age > (ages.get(r.urn) ?? -1)) ages.set(r.urn, r.age);
      this.lastAges = { ages: [...ages.values()], taken };
      // Rows were delivered: look again (a property's holders may have been queued by this step).
      return 'more';
    });
  }

  /**
   * Builds and applies the documents of these entities; those the backend refused, with why. Throws
   * when they could not be delivered as a whole (the transaction is then unusable).
   */
  private async deliver(tx: Tx, urns: string[]): Promise<Map<string, string>> {
    await indexedPropertiesChanged(tx, urns.filter((u) => u.startsWith(STRUCTURED_PROPERTY)), (type, fields) => this.ensureFields(type, fields));
    const { docs, gone } = await buildDocuments(this.entities, this.pool, urns);
    await this.prepare([...docs, ...gone].map((d) => d.entityType));
    for (const d of docs) {
      const missing: FieldSpec[] = [];
      for (const [name, f] of d.fields) if (!this.knownFields.has(`${d.entityType}\0${name}`)) missing.push({ name, type: f.type });
      if (missing.length) await this.ensureFields(d.entityType, missing);
    }
    return this.backend.apply(docs, gone, tx);
  }

  /**
   * {@link deliver} under a savepoint; when that fails (not for a reason of the backend's as a whole),
   * each half again, down to the entities that fail alone: those are returned with their error.
   */
  private async deliverIsolated(tx: Tx, urns: string[]): Promise<Map<string, string>> {
    try {
      return await inSavepoint(tx, 'search_delivery', () => this.deliver(tx, urns));
    } catch (err) {
      if (isTransient(err)) throw err;
      if (urns.length === 1) return new Map([[urns[0]!, describeFailure(err)]]);
      const half = Math.ceil(urns.length / 2);
      return new Map([...(await this.deliverIsolated(tx, urns.slice(0, half))), ...(await this.deliverIsolated(tx, urns.slice(half)))]);
    }
  }

  /**
   * Ships time series entries (in `opensearch` mode). When isolated, a failure that is not OpenSearch's
   * as a whole is rolled back to a savepoint and logged, and the step goes on with the documents: time
   * series shipping never holds back search documents.
   */
  private async ship(tx: Tx, isolate: boolean): Promise<number> {
    const timeseries = this.timeseries;
    if (!timeseries) return 0;
    if (!isolate) return timeseries.ship(tx);
    try {
      return await inSavepoint(tx, 'search_timeseries', () => timeseries.ship(tx));
    } catch (err) {
      if (isTransient(err)) throw err;
      this.stats.timeseriesFailures++;
      if (Date.now() - this.lastShipWarning > 30_000) {
        this.lastShipWarning = Date.now();
        this.log.warn({ err }, 'could not ship time series entries; they wait in their outbox, and search documents go on');
      }
      return 0;
    }
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
}

/** How long the dispatcher waits before its next step, after one that delivered `delivered` rows (see LINGER_BELOW). */
export function lingerAfter(delivered: number, lingerMs: number): number {
  return delivered > 0 && delivered < LINGER_BELOW ? lingerMs : 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
