/**
 * An entity's timeline, as DataHub's timeline API answers it: what changed in the categories asked
 * for, computed from consecutive versions of the aspects each category reads (svc keeps every
 * version), one {@link ChangeTransaction} per moment (the aspects one write changed share it), oldest
 * first, each with the entity's computed semantic version after it.
 *
 *   await timeline.changes(principal, 'urn:li:dataset:(urn:li:dataPlatform:hive,clicks,PROD)', { categories: ['TAG'], raw: false })
 *   // → [{timestamp, actor, semVer: '0.0.0-computed', semVerChange: 'MINOR', changeEvents: [{category: 'TAG', operation: 'ADD', …}], versionStamp: 'globalTags:1'}]
 */
import jsonpatch from 'fast-json-patch';
import type { Principal } from '../auth/authorize.ts';
import type { AspectHistory, EntityService, StoredAspect } from '../entities/entityService.ts';
import { registry } from '../registry/registry.ts';
import { SvcError } from '../shared/errors.ts';
import { aspectsFor, type ChangeCategory } from './categories.ts';
import { SEMANTIC_CHANGES, type ChangeEvent, type ChangeTransaction, type SemanticChange } from './changes.ts';
import { differFor } from './differs.ts';

/** Without a start, a timeline looks this far back from its end (DataHub's default: a week). */
export const DEFAULT_LOOKBACK_MS = 7 * 24 * 60 * 60 * 1000;

/** The most versions of one aspect a timeline compares (the newest of the window). */
export const MAX_VERSIONS_PER_ASPECT = 1000;

/** The latest time a JavaScript date holds; later ends are read as it. */
const MAX_TIME_MS = 8.64e15;

export interface TimelineQuery {
  categories: ChangeCategory[];
  /** Epoch milliseconds; absent or -1: {@link DEFAULT_LOOKBACK_MS} before the end. */
  startTime?: number;
  /** Epoch milliseconds; absent or 0: now. */
  endTime?: number;
  /** Add each transaction's JSON Patch (`rawDiff`). */
  raw: boolean;
}

/** One new version of an aspect, and the version it replaced (undefined: the aspect was created). */
interface Transition {
  aspect: string;
  before: StoredAspect | undefined;
  after: StoredAspect;
}

/** A transaction being assembled: its events and raw changes, at one time. */
interface Moment {
  actor: string;
  events: ChangeEvent[];
  raw: { op: string; path: string; value?: unknown }[];
  diffed: Set<string>;
}

export class TimelineService {
  constructor(
    private readonly entities: EntityService,
    private readonly now: () => number = Date.now,
  ) {}

  /** The entity's changes in the window, oldest first; an entity that does not exist has none (`[]`, as DataHub answers). */
  async changes(principal: Principal, urn: string, query: TimelineQuery): Promise<ChangeTransaction[]> {
    const target = registry.resolveUrn(urn);
    const end = query.endTime === undefined || query.endTime === 0 ? this.now() : query.endTime;
    const start = query.startTime === undefined || query.startTime === -1 ? end - DEFAULT_LOOKBACK_MS : query.startTime;
    if (start > end) throw SvcError.validation([`startTime ${start} is after endTime ${end}: a timeline's window starts before it ends (epoch milliseconds)`]);
    const plan = query.categories.map((category) => ({ category, aspects: aspectsFor(target.spec, category) }));
    const names = [...new Set(plan.flatMap((p) => p.aspects))];
    // Nothing was written before 1970 or after the latest date a JavaScript date holds. Versions are
    // written at microseconds and answered at milliseconds: the end's millisecond is in the window.
    const clamp = (t: number) => new Date(Math.min(Math.max(t, 0), MAX_TIME_MS));
    const history = await this.entities.history(principal, target, names, clamp(start), clamp(end + 1), MAX_VERSIONS_PER_ASPECT);

    const transitions = new Map<string, Transition[]>();
    for (const [aspect, h] of history) {
      let before = h.before;
      const list: Transition[] = [];
      for (const after of h.changes) {
        list.push({ aspect, before, after });
        before = after;
      }
      transitions.set(aspect, list);
    }

    const moments = new Map<number, Moment>();
    for (const { category, aspects } of plan) {
      for (const aspect of aspects) {
        const differ = differFor(category, aspect, target.spec.keyAspect);
        if (!differ) continue;
        for (const t of transitions.get(aspect) ?? []) {
          const time = t.after.createdOn.getTime();
          const events = differ(t.before?.value, t.after.value, { entityUrn: target.urn, category, auditStamp: { time, actor: t.after.createdBy } });
          if (events.length === 0) continue;
          let moment = moments.get(time);
          if (!moment) moments.set(time, (moment = { actor: t.after.createdBy, events: [], raw: [], diffed: new Set() }));
          for (const e of events) moment.events.push(e);
          if (query.raw && !moment.diffed.has(aspect)) {
            moment.diffed.add(aspect);
            for (const op of rawDiff(aspect, t.before?.value, t.after.value)) moment.raw.push(op);
          }
        }
      }
    }

    const times = [...moments.keys()].sort((a, b) => a - b);
    const stamps = versionStamps(history, times);
    let version: [number, number, number] | undefined;
    return times.map((timestamp, i) => {
      const m = moments.get(timestamp)!;
      const change = highest(m.events);
      version = nextVersion(version, change);
      return {
        timestamp,
        actor: m.actor,
        semVer: `${version.join('.')}-computed`,
        semVerChange: change,
        changeEvents: m.events,
        versionStamp: stamps[i]!,
        ...(query.raw ? { rawDiff: m.raw } : {}),
      };
    });
  }
}

/** A JSON Patch from one version of an aspect to the next, its paths under the aspect's name (`/globalTags/tags/1`). */
function rawDiff(aspect: string, before: unknown, after: unknown): { op: string; path: string; value?: unknown }[] {
  const doc = (v: unknown) => ({ [aspect]: v === undefined ? null : v });
  return jsonpatch.compare(doc(before), doc(after)).map((op) => ({ ...op }));
}

/** The most a transaction's events matter. */
function highest(events: ChangeEvent[]): SemanticChange {
  let at = 0;
  for (const e of events) at = Math.max(at, SEMANTIC_CHANGES.indexOf(e.semVerChange));
  return SEMANTIC_CHANGES[at]!;
}

/** The entity's version after a transaction: 0.0.0 for the first, then the part of its highest change raised. */
function nextVersion(previous: [number, number, number] | undefined, change: SemanticChange): [number, number, number] {
  if (!previous) return [0, 0, 0];
  const [major, minor, patch] = previous;
  if (change === 'MAJOR') return [major + 1, 0, 0];
  if (change === 'MINOR') return [major, minor + 1, 0];
  if (change === 'PATCH') return [major, minor, patch + 1];
  return previous;
}

/**
 * For each of `times` (ascending), the version number each aspect read had then
 * (`globalTags:2;ownership:1`, aspects in name order): one pass over each aspect's versions.
 */
function versionStamps(history: Map<string, AspectHistory>, times: number[]): string[] {
  const aspects = [...history.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const at = aspects.map(() => 0);
  const numbers = aspects.map(([, h]) => h.before?.number);
  return times.map((time) => {
    const parts: string[] = [];
    aspects.forEach(([aspect, h], i) => {
      while (at[i]! < h.changes.length && h.changes[at[i]!]!.createdOn.getTime() <= time) numbers[i] = h.changes[at[i]!++]!.number;
      if (numbers[i] !== undefined) parts.push(`${aspect}:${numbers[i]}`);
    });
    return parts.join(';');
  });
}
