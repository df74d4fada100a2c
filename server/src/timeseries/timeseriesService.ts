/**
 * Operations on time series aspects (DataHub's `operations` actions): truncating the entries of one
 * aspect of one entity type up to a time (a dry run first, then a task), the status of such a task,
 * the size of each aspect's entries, and the listing of entries. The rules are DataHub's
 * (truncation.ts); where the entries live and how a truncation runs is the store's (store.ts).
 *
 * Task ids have the `node:number` form DataHub's clients check: `svc:42` for svc's own tasks (the
 * number is the task's id in `/api/tasks`), OpenSearch's own ids in `opensearch` mode.
 */
import { authorize, type Principal } from '../auth/authorize.ts';
import { SvcError } from '../shared/errors.ts';
import { registry, type AspectSpec, type EntitySpec } from '../registry/registry.ts';
import type { ScrollIds } from '../entities/scrollIds.ts';
import { TASK_ID } from '../contract/tasks.ts';
import { timeseriesIndexName } from './partitions.ts';
import type { EntryQuery, EntryRow, TimeseriesStore } from './store.ts';
import { readParameters, type ParameterSpec } from './actionParameters.ts';
import { flagConflict, parseTruncation, reindexes, summary } from './truncation.ts';
import type { TruncationAnswer } from '../contract/truncation.ts';

export interface IndexSize {
  indexName: string;
  entityName: string;
  aspectName: string;
  /** Kilobytes (bytes / 1000), despite the name, as DataHub reports it. */
  sizeMb: number;
}

/** One entry as DataHub's `GET /openapi/v2/timeseries` lists it. */
export interface TimeseriesEntry {
  urn: string;
  messageId?: string;
  timestampMillis: number;
  systemMetadata?: unknown;
  /** The aspect's value. */
  event: unknown;
}

export interface EntryPage {
  scrollId: string | null;
  results: TimeseriesEntry[];
}

export const MAX_ENTRY_PAGE = 1000;
/** Entries a filtered listing looks at, at most (the newest). */
export const MAX_FILTERED_SCAN = 10_000;

export class TimeseriesService {
  constructor(
    private readonly store: TimeseriesStore,
    private readonly scrollIds: ScrollIds,
  ) {}

  /**
   * The entries of a time series aspect of an entity type (or of one entity of it, `urn`), newest
   * first, between `startTimeMillis` and `endTimeMillis` (both inclusive, either optional), `count` a
   * page (at most 1000), with a scroll id for the next page.
   */
  async list(
    principal: Principal,
    entityType: string,
    aspectName: string,
    opts: {
      count: number;
      scrollId?: string;
      urn?: string;
      startTimeMillis?: number;
      endTimeMillis?: number;
      systemMetadata: boolean;
      /** Only the entries whose value this holds for (eventFilter.ts); the newest MAX_FILTERED_SCAN entries are looked at. */
      matches?: (event: unknown) => boolean;
    },
  ): Promise<EntryPage> {
    authorize(principal, 'READ');
    const { spec, aspect } = timeseriesAspect(entityType, aspectName);
    if (opts.urn !== undefined) {
      // A URN that does not parse is refused as anywhere else; one of another entity type has no entries here.
      const target = registry.resolveUrn(opts.urn);
      if (target.spec.name !== spec.name) throw SvcError.validation([`query parameter urn: ${opts.urn} is a ${target.spec.name}, and these are entries of ${spec.name} entities`]);
    }
    const index = timeseriesIndexName(spec.name, aspect.name);
    const scope = `timeseries:${index}:${opts.urn ?? ''}:${opts.startTimeMillis ?? ''}:${opts.endTimeMillis ?? ''}`;
    const after = opts.scrollId ? (this.scrollIds.decode(scope, opts.scrollId).split(':').map(Number) as [number, number]) : undefined;
    const limit = Math.min(Math.max(opts.count, 1), MAX_ENTRY_PAGE);
    const query = { urn: opts.urn, startTimeMillis: opts.startTimeMillis, endTimeMillis: opts.endTimeMillis, after, limit };
    const rows = opts.matches ? await this.filtered(index, query, opts.matches) : await this.store.list(index, query);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      scrollId: rows.length > limit && last ? this.scrollIds.encode(scope, `${last.timestampMillis}:${last.id}`) : null,
      results: page.map((r) => ({
        urn: r.urn,
        ...(typeof r.value.messageId === 'string' ? { messageId: r.value.messageId } : {}),
        timestampMillis: r.timestampMillis,
        ...(opts.systemMetadata ? { systemMetadata: r.systemMetadata } : {}),
        event: r.value,
      })),
    };
  }

  /**
   * The entries a filter holds for, limit + 1 of them: read a page at a time, newest first, and
   * filtered here (the stores index no field of the values but the time), at most the newest
   * {@link MAX_FILTERED_SCAN}. The clients filter one entity's entries (a pipeline's checkpoints).
   */
  private async filtered(index: string, q: EntryQuery, matches: (event: unknown) => boolean): Promise<EntryRow[]> {
    const out: EntryRow[] = [];
    let after = q.after;
    for (let scanned = 0; scanned < MAX_FILTERED_SCAN && out.length <= q.limit; ) {
      const page = await this.store.list(index, { ...q, after, limit: MAX_ENTRY_PAGE });
      const rows = page.slice(0, MAX_ENTRY_PAGE);
      for (const r of rows) if (out.length <= q.limit && matches(r.value)) out.push(r);
      scanned += rows.length;
      if (page.length <= MAX_ENTRY_PAGE) break;
      const last = rows[rows.length - 1]!;
      after = [last.timestampMillis, last.id];
    }
    return out;
  }

  /**
   * `truncateTimeseriesAspect`, as DataHub answers it: the dry-run message, the flag-check line, or the
   * id of the task that deletes every entry with `timestampMillis <= endTimeMillis`.
   */
  async truncate(principal: Principal, body: unknown): Promise<string> {
    const answer = await this.truncation(principal, body);
    return 'conflict' in answer ? answer.conflict : answer.dryRun ? answer.message : answer.task;
  }

  /**
   * A truncation in svc's form (`POST /api/timeseries/truncations`): a dry run's counts, with DataHub's
   * message beside them, or the task of a real run. Both flags set alike (DataHub's flag check) is
   * refused as invalid: nothing is done.
   */
  async truncations(principal: Principal, body: unknown): Promise<TruncationAnswer> {
    const answer = await this.truncation(principal, body);
    if ('conflict' in answer) throw SvcError.validation([answer.conflict]);
    return answer;
  }

  /** A truncation's one path; DataHub's flag check answers `{conflict}` with its line, and nothing is done. */
  private async truncation(principal: Principal, body: unknown): Promise<TruncationAnswer | { conflict: string }> {
    authorize(principal, 'TRUNCATE_TIMESERIES');
    const r = parseTruncation(body);
    const { spec, aspect } = timeseriesAspect(r.entityType, r.aspect);
    const conflict = flagConflict(r);
    if (conflict) return { conflict };
    const index = timeseriesIndexName(spec.name, aspect.name);
    if (r.dryRun) {
      const counts = await this.store.count(index, r.endTimeMillis);
      return { dryRun: true, toDelete: counts.numToDelete, total: counts.total, reindex: reindexes(r, counts.numToDelete, counts.total), message: summary(counts, r) };
    }
    // A real run answers its task id only: the store counts what it needs to start it.
    const { dryRun: _, timeoutSeconds, ...order } = r;
    return { dryRun: false, task: await this.store.truncate({ ...order, index, entityType: spec.name, aspect: aspect.name, timeoutSeconds: timeoutSeconds ?? null }) };
  }

  /**
   * `getEsTaskStatus`: `{completed, taskId, status, runTimeNanos}` of a truncation task, or `{error}`
   * when there is none such. `params`: the action's body (`task`, or `nodeId` and `taskId`).
   */
  async taskStatus(principal: Principal, params: unknown): Promise<Record<string, unknown>> {
    authorize(principal, 'GET_TASK_STATUS');
    return this.statusOf(principal, compositeTask(params));
  }

  /**
   * The status of a task given as `node:number`; `{error}` when there is none such. VALIDATION for a
   * malformed id (`message` says what form is expected: the two DataHub routes word it apart).
   */
  async statusOf(principal: Principal, taskId: string, message = 'Task should be in the form nodeId:taskId e.g. aB1cdEf2GHIJKLMnoPQr3S:123456'): Promise<Record<string, unknown>> {
    authorize(principal, 'GET_TASK_STATUS');
    if (!TASK_ID.test(taskId) || /:0+$/.test(taskId)) throw SvcError.validation([`${message} (got ${taskId})`]);
    return (await this.store.status(taskId)) ?? { error: `Could not get task status for ${taskId}` };
  }

  /** `getIndexSizes`: the size on disk of each aspect's entries (its partitions), named as DataHub names the index. */
  /** `getIndexSizes`, whose body holds no parameters (an empty object, or none). */
  async indexSizes(principal: Principal, body: unknown = {}): Promise<{ indexSizes: IndexSize[] }> {
    authorize(principal, 'GET_INDEX_SIZES');
    readParameters('getIndexSizes', {}, body);
    const sizes = (await this.store.sizes()).map(({ indexName, bytes }) => {
      const parsed = /^(?:.*_)?([^_]+)_(.+)aspect_v1$/.exec(indexName);
      return { indexName, ...(parsed ? { entityName: parsed[1]!, aspectName: parsed[2]! } : {}), sizeMb: bytes / 1000 } as IndexSize;
    });
    return { indexSizes: sizes.sort((a, b) => a.indexName.localeCompare(b.indexName)) };
  }
}

/** The entity type and its time series aspect (any case, as DataHub's index names lowercase it); VALIDATION otherwise. */
function timeseriesAspect(entityType: string, aspectName: string): { spec: EntitySpec; aspect: AspectSpec } {
  const spec = registry.entity(entityType);
  const series = registry.aspectsOf(spec).filter((a) => a.timeseries);
  const aspect = series.find((a) => a.name.toLowerCase() === aspectName.toLowerCase());
  if (!aspect) {
    const names = series.map((a) => a.name).join(', ');
    throw SvcError.validation([`${aspectName} is not a time series aspect of ${spec.name}; ${names ? `its time series aspects are ${names}` : 'it has none'}`]);
  }
  return { spec, aspect };
}

/** getEsTaskStatus' parameters, DataHub's: `task` (`node:number`), or `nodeId` and `taskId`. */
const TASK_PARAMETERS: Record<string, ParameterSpec> = { nodeId: { kind: 'string' }, taskId: { kind: 'long' }, task: { kind: 'string' } };

/**
 * The `node:number` task id of getEsTaskStatus' parameters: a missing, mistyped or unknown parameter is
 * named (see actionParameters.ts); then DataHub's rules and messages, for neither form or both given.
 */
function compositeTask(body: unknown): string {
  const p = readParameters('getEsTaskStatus', TASK_PARAMETERS, body) as { task?: string; nodeId?: string; taskId?: number };
  const taskId = p.taskId ?? 0;
  const split = p.nodeId !== undefined && taskId > 0;
  if (p.task === undefined && !split) throw SvcError.validation(['Please specify either Node ID + task ID OR composite task parameters']);
  if (p.task !== undefined && split && p.task !== `${p.nodeId}:${taskId}`) throw SvcError.validation(['Please specify only one of Node ID + task ID OR composite task parameters']);
  return p.task ?? `${p.nodeId}:${taskId}`;
}
