/**
 * Writes without locks, checked by their statement: each change is prepared from the state its rules
 * need, read without locks, and the rows go in by one statement that writes them only if the aspect's
 * row and every row the decision relied on (its guards) are still as read (see writeStatement.ts); a
 * change found stale is prepared again (see writes.ts). Where that state comes from is this module's
 * strategy (Config.writeStrategy): a read of its own, a read grouped with those of concurrent writes,
 * the row the entity's last write left (keptReads.ts), or a guess (writeGuesses.ts). None is trusted:
 * the statement checks them all alike.
 */
import { staleWrite, type Pool } from '../db/pool.ts';
import type { Principal } from '../auth/authorize.ts';
import { readForWrite, type ReadForWrite } from './aspectStore.ts';
import { writeAspectsAtomically, type AspectWrite, type Guard, type WriteMode, type Written } from './writeStatement.ts';
import type { AspectHook, AspectHooks, PendingWrite, WriteIntent, WriteState } from './aspectHooks.ts';
import { WriteBatcher } from './writeBatcher.ts';
import { KeptReads, type KeptRead } from './keptReads.ts';
import { WriteGuesses } from './writeGuesses.ts';
import { jsonbText } from '../db/jsonbText.ts';
import { StatementGroup, type Pending } from '../db/statementGroup.ts';
import type { WriteStrategy } from '../config.ts';
import {
  aspectWrite,
  checkVersion,
  intentOf,
  LockNeeded,
  NOTHING,
  checkedWriteCounts,
  startingValue,
  writeOrder,
  written,
  type Change,
  type CheckedAttempt,
  type ShownAspect,
} from './writes.ts';

/** How the reads of concurrent checked writes are grouped (see db/statementGroup.ts). */
const READ_GROUPING = { maxInFlight: 2, nextStatementAt: 4, maxBatch: 64 };

/** A change ready for a checked write. */
interface PreparedWrite {
  change: Change;
  write: AspectWrite;
  result(r: Written): ShownAspect;
}

export class CheckedWrites implements CheckedAttempt {
  private readonly readGroups = new Map<AspectHook, StatementGroup<WriteIntent, WriteState<unknown>>>();
  /** What checked writes left, for the next write of the same aspect to start from (see keptReads.ts). */
  private readonly kept = new KeptReads();
  /** Whether writes to entities nothing is kept of start from a guess (see writeGuesses.ts). */
  private readonly guesses = new WriteGuesses();

  constructor(
    private readonly pool: Pool,
    private readonly hooks: AspectHooks,
    private readonly batcher: WriteBatcher,
    /** Where the state a write's rules check comes from (see Config.writeStrategy). */
    private readonly strategy: WriteStrategy,
  ) {}

  /** Sets up what a newly attached hook's writes need: its reads grouped like the writes. */
  hookAdded(hook: AspectHook): void {
    const read = hook.readState.bind(hook);
    // The reads of concurrent writes go out together, as their writes do (see WriteBatcher).
    const send = async (batch: Pending<WriteIntent, WriteState<unknown>>[]) => {
      const reads = await read(batch.map((p) => p.item), this.pool);
      batch.forEach((p, i) => p.resolve(reads[i]!));
    };
    this.readGroups.set(hook, new StatementGroup(send, READ_GROUPING));
  }

  /** Drops what writes of the entity left (see keptReads.ts): a delete changed its rows. */
  forgetEntity(urn: string): void {
    for (const h of this.hooks.all) if (h.speculative) this.kept.forget(urn, h.aspect);
  }

  /** Drops what writes of these aspects left: they are about to be written under locks. */
  forget(changes: Change[]): void {
    for (const c of changes) this.kept.forget(c.target.urn, c.aspect.name);
  }

  /**
   * What a write found changed is read anew: an aspect another writer changed behind a kept row is not
   * kept any more (see keptReads.ts), and a wrong guess is not made again.
   */
  foundStale(changes: Change[]): void {
    for (const c of changes) {
      if (c.startedFrom === 'kept') this.kept.contended(c.target.urn, c.aspect.name);
      if (c.startedFrom === 'guess') c.guessWrong = true;
    }
    if (changes.some((c) => c.startedFrom === 'guess')) this.guesses.wrong();
  }

  /**
   * Prepares every change without locks and writes them in one checked statement: a lone write joins
   * the group commit of the writes in flight (see WriteBatcher); the rows of one request go in one
   * atomic statement, entities in lock order.
   */
  async write(principal: Principal, changes: Change[], mode: WriteMode, now: number): Promise<ShownAspect[]> {
    const prepared = await Promise.all(changes.map((c) => this.prepare(principal, changes, c, mode, now)));
    const rows = prepared.map((p, i) => ({ p, i })).filter((x): x is { p: PreparedWrite; i: number } => x.p !== undefined);
    if (rows.length === 0) return []; // e.g. refreshes of aspects none of the entities has
    if (rows.length === 1) {
      const { p } = rows[0]!;
      return [p.result(await this.batcher.write(p.write))];
    }
    const order = writeOrder(this.hooks);
    const ordered = [...rows].sort((a, b) => order(a.p.change, b.p.change));
    const results = await writeAspectsAtomically(this.pool, ordered.map((x) => x.p.write));
    const out: ShownAspect[] = [];
    ordered.forEach((x, k) => (out[x.i] = x.p.result(results[k]!)));
    return out.filter((w) => w !== undefined);
  }

  /** Entities of a request that an earlier change of the same request writes (creating them if new). */
  private createdHere(changes: Change[], c: Change): boolean {
    return changes.some((o) => o !== c && o.target.urn === c.target.urn && !this.hooks.has(o.aspect.name));
  }

  /** One change ready to be written: its row (with what it relies on) and how to report it. */
  private async prepare(principal: Principal, changes: Change[], c: Change, mode: WriteMode, now: number): Promise<PreparedWrite | undefined> {
    const systemMetadata = { ...c.systemMetadata, lastObserved: now };
    const hooks = this.hooks.of(c.aspect.name);
    if (hooks.length === 0 && c.kind === 'set') {
      const write = aspectWrite(c.target, c.aspect.name, c.value, systemMetadata, principal, mode);
      // Checked against the row the version was read from: a write in between makes it stale, read again.
      if (c.conditions?.version !== undefined) write.expected = await checkVersion(this.pool, c);
      return { change: c, write, result: (r) => written(c, r, c.value, systemMetadata, principal, now) };
    }
    const reader = hooks[0];
    const intent = intentOf(c);
    c.startedFrom = undefined;
    const speculative = reader?.speculative;
    const kept = this.strategy.kept && speculative ? this.kept.take(c.target.urn, c.aspect.name) : undefined;
    const state = kept && speculative!.stateFor(intent, kept.state);
    if (kept && state) {
      try {
        const prepared = await this.prepareFrom({ ...kept, state }, principal, changes, c, mode, now, hooks, reader);
        checkedWriteCounts.kept++;
        c.startedFrom = 'kept';
        return prepared;
      } catch (err) {
        if (err instanceof LockNeeded) throw err;
        // Refused on what was kept: decided again on what is stored now (the refusal may be of a
        // state that has changed since; the write statement checks only what goes ahead).
        this.kept.forget(c.target.urn, c.aspect.name);
      }
    }
    // A lone write to an entity nothing is kept of (not even the mark of another writer): a guess,
    // while guesses hold. (A request of several writes reads them in one statement anyway, and may
    // create the entity it writes values of, which a guess would take to exist.)
    const guess =
      this.strategy.guess && speculative && changes.length === 1 && !c.guessWrong && c.conditions?.version === undefined && !this.kept.holds(c.target.urn, c.aspect.name) && this.guesses.allowed()
        ? speculative.guess(intent)
        : undefined;
    if (guess) {
      try {
        const prepared = await this.prepareFrom(guess, principal, changes, c, mode, now, hooks, reader);
        this.guesses.guessed();
        checkedWriteCounts.guessed++;
        c.startedFrom = 'guess';
        return prepared;
      } catch (err) {
        if (err instanceof LockNeeded) throw err;
        // Refused on the guess: decided on what is stored (the guess may be what was wrong).
      }
    }
    const read: ReadForWrite & { state?: unknown } = !reader
      ? await readForWrite(this.pool, c.target.urn, c.aspect.name)
      : this.strategy.grouped
        ? await this.readGroups.get(reader)!.call(intent)
        : (await reader.readState([intent], this.pool))[0]!;
    return this.prepareFrom(read, principal, changes, c, mode, now, hooks, reader);
  }

  /** Prepares a change of an aspect with hooks from its state as read (or kept, or guessed). */
  private async prepareFrom(
    read: ReadForWrite & { state?: unknown },
    principal: Principal,
    changes: Change[],
    c: Change,
    mode: WriteMode,
    now: number,
    hooks: readonly AspectHook[],
    reader: AspectHook | undefined,
  ): Promise<PreparedWrite | undefined> {
    const systemMetadata = { ...c.systemMetadata, lastObserved: now };
    if (c.conditions?.version !== undefined && (await checkVersion(this.pool, c)) !== read.token) {
      throw staleWrite(`${c.aspect.name} of ${c.target.urn} was written meanwhile`);
    }
    const value = await startingValue(hooks, c, read.previous, this.pool, reader, read.state);
    if (value === NOTHING) return undefined;
    const pending: PendingWrite = { target: c.target, aspect: c.aspect, kind: c.kind, value, patch: c.patch?.ops, previous: read.previous, principal, entityCreatedHere: this.createdHere(changes, c) };
    const guards: Guard[] = [];
    let shown: unknown;
    for (const h of hooks) {
      const p = await h.check(pending, this.pool, h === reader ? read.state : undefined);
      if (p.needsLock) throw new LockNeeded();
      pending.value = p.value;
      for (const g of p.guards ?? []) guards.push(g);
      shown = p.shown;
    }
    const write = { ...aspectWrite(c.target, c.aspect.name, pending.value, systemMetadata, principal, mode), expected: read.token, guards };
    return {
      change: c,
      write,
      result: (r) => {
        if (reader?.speculative) this.keepWritten(read, pending, reader, systemMetadata, r, now);
        return written(c, r, pending.value, systemMetadata, principal, now, shown);
      },
    };
  }

  /**
   * Keeps what a checked write left (see keptReads.ts): its row as stored, named as a read names it
   * (the metadata's text is what the write sent, or the stored one when the value was unchanged and
   * only the system metadata was replaced), and the state its hook says a read would find.
   */
  private keepWritten(read: ReadForWrite & { state?: unknown }, w: PendingWrite, reader: AspectHook, systemMetadata: Record<string, unknown>, r: Written, now: number): void {
    if (!this.strategy.kept) return;
    const text = r.outcome === 'unchanged' ? read.text : JSON.stringify(w.value);
    const systemText = jsonbText(systemMetadata);
    const { urn } = w.target;
    if (text === undefined || systemText === undefined) return this.kept.forget(urn, w.aspect.name);
    const kept: KeptRead = {
      token: `${text} ${systemText}`,
      text,
      previous: {
        urn,
        aspect: w.aspect.name,
        version: 0,
        value: w.value,
        systemMetadata,
        createdOn: r.outcome === 'unchanged' && read.previous ? read.previous.createdOn : new Date(now),
        createdBy: r.outcome === 'unchanged' && read.previous ? read.previous.createdBy : w.principal.actor,
      },
      state: reader.speculative!.stateAfter(w, read.state),
    };
    this.kept.keep(urn, w.aspect.name, kept);
  }
}
