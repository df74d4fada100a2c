/**
 * The structured properties that search field names resolve to (their definitions and statuses, see
 * propertyStore.findProperties), kept between searches: a search reads them once per change of any
 * property's definition or status instead of once per call.
 *
 * What is kept is dropped as soon as this process can know of a change:
 * - a change made here, as its transaction commits (EntityService's commit listeners), so a search
 *   after a write through this server sees it (a soft-deleted property is refused at once);
 * - a change made by another server, when its notification arrives (`svc_properties`, migration
 *   018), a few milliseconds after that change commits, the way its values reach search;
 * - nothing is kept while the listening connection is down.
 * A lookup that overlapped a change is not kept: it may have read the state from before it.
 */
import type { Pool } from '../db/pool.ts';
import { Listener } from '../db/listener.ts';
import type { Logger } from '../shared/log.ts';
import { findProperties } from './propertyStore.ts';
import type { PropertyState } from './valueRules.ts';

export const PROPERTIES_CHANNEL = 'svc_properties';
const PROPERTY_URN = 'urn:li:structuredProperty:';
/** Distinct lookups kept at most (all are dropped when more come: they are cheap to read again). */
const MAX_ENTRIES = 1_000;

export class DefinitionCache {
  private readonly entries = new Map<string, Map<string, PropertyState>>();
  private generation = 0;
  private listening = false;
  private listener: Listener | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly listenUrl: string,
    private readonly log: Logger,
  ) {}

  /** Starts listening for other servers' changes; until then (and whenever not listening) nothing is kept. */
  start(): void {
    this.listener ??= new Listener(
      this.listenUrl,
      PROPERTIES_CHANNEL,
      'svc-properties',
      this.log,
      () => {
        this.invalidate();
        this.listening = true;
      },
      () => {
        this.listening = false;
        this.invalidate();
      },
    );
    this.listener.start();
  }

  async stop(): Promise<void> {
    await this.listener?.stop();
    this.listening = false;
    this.invalidate();
  }

  /** Entities just changed in a committed transaction: what is kept goes if a structured property is among them. */
  committed(urns: Iterable<string>): void {
    for (const urn of urns) {
      if (urn.startsWith(PROPERTY_URN)) return this.invalidate();
    }
  }

  /** The properties with these qualified names or field names (see findProperties), read or kept. */
  async find(qualifiedNames: string[], fieldNames: string[]): Promise<Map<string, PropertyState>> {
    if (qualifiedNames.length === 0 && fieldNames.length === 0) return new Map();
    const key = JSON.stringify([[...qualifiedNames].sort(), [...fieldNames].sort()]);
    const kept = this.listening ? this.entries.get(key) : undefined;
    if (kept) return kept;
    const generation = this.generation;
    const found = await findProperties(this.pool, qualifiedNames, fieldNames);
    if (this.listening && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, found);
    }
    return found;
  }

  private invalidate(): void {
    this.generation++;
    this.entries.clear();
  }
}
