/**
 * Writes under locks: every change of a request in one transaction, each entity locked (in lock order)
 * before its aspect is read, so the rules check a write against the state it replaces and nothing can
 * change it meanwhile. The path of time series, of writes whose rules ask for it, of writes that found
 * their state changed twice without locks, and of every write under `SVC_WRITE_STRATEGY=locked`.
 */
import { inTransaction, type Db, type Pool } from '../db/pool.ts';
import { inLockOrder, lockEntity } from '../db/locks.ts';
import type { Principal } from '../auth/authorize.ts';
import { registry } from '../registry/registry.ts';
import { insertTimeseries, lockAndRead } from './aspectStore.ts';
import { writeAspect, type Guard, type WriteMode } from './writeStatement.ts';
import type { AspectHooks, PendingWrite } from './aspectHooks.ts';
import { aspectWrite, checkVersion, intentOf, NOTHING, startingValue, writeOrder, written, type Change, type ShownAspect, type WriteAttempt } from './writes.ts';

export class LockedWrites implements WriteAttempt {
  constructor(
    private readonly pool: Pool,
    private readonly hooks: AspectHooks,
    /** Told of the changes about to be written under locks (what a write left is not kept past them). */
    private readonly beforeLocked: (changes: Change[]) => void,
  ) {}

  /** Writes every change in one transaction, each under its entity's lock. */
  async write(principal: Principal, changes: Change[], mode: WriteMode, now: number): Promise<ShownAspect[]> {
    this.beforeLocked(changes);
    const order = writeOrder(this.hooks);
    const ordered = changes.map((c, i) => ({ c, i })).sort((a, b) => order(a.c, b.c));
    const results = await inTransaction(this.pool, async (tx) => {
      // Every entity of the request (in lock order), then what the writes reference: the order of the
      // write statement. (A lone entity whose writes reference nothing is locked as its aspect is read.)
      const urns = inLockOrder(changes.map((c) => c.target.urn));
      const referencing = this.hooks.all.some((h) => h.lockReferenced && changes.some((c) => c.aspect.name === h.aspect));
      if (urns.length > 1 || referencing) for (const urn of urns) await lockEntity(tx, urn);
      await this.lockReferenced(changes, tx);
      const out: (ShownAspect | undefined)[] = [];
      for (const { c, i } of ordered) out[i] = await this.writeOne(tx, c, mode, principal, now);
      return out;
    });
    return results.filter((w): w is ShownAspect => w !== undefined);
  }

  /** Runs the hooks' `lockReferenced` of a request, with what the callers sent. */
  private async lockReferenced(changes: Change[], tx: Db): Promise<void> {
    for (const hook of this.hooks.all) {
      if (!hook.lockReferenced) continue;
      const mine = changes.filter((c) => c.aspect.name === hook.aspect).map(intentOf);
      if (mine.length) await hook.lockReferenced(mine, tx);
    }
  }

  /** Writes one change in a transaction, under its entity's lock; undefined for a refresh of an aspect that is not stored. */
  private async writeOne(tx: Db, c: Change, mode: WriteMode, principal: Principal, now: number): Promise<ShownAspect | undefined> {
    const systemMetadata = { ...c.systemMetadata, lastObserved: now };
    if (c.aspect.timeseries) {
      // A time series has no versions (an entry is added, or replaces the one of its identity): CREATE of
      // the aspect means nothing for it, CREATE_ENTITY still applies.
      await writeAspect(tx, aspectWrite(c.target, c.target.spec.keyAspect, registry.keyAspectValue(c.target), systemMetadata, principal, mode === 'create_entity' ? mode : 'upsert'));
      await insertTimeseries(tx, {
        entityType: c.target.spec.name,
        aspect: c.aspect.name,
        urn: c.target.urn,
        timestampMillis: (c.value as { timestampMillis: number }).timestampMillis,
        value: c.value as Record<string, unknown>,
        systemMetadata,
        actor: principal.actor,
      });
      return written(c, { outcome: 'created', version: 0 }, c.value, systemMetadata, principal, now);
    }
    const hooks = this.hooks.of(c.aspect.name);
    if (hooks.length === 0 && c.kind === 'set') {
      if (c.conditions?.version !== undefined) {
        await lockEntity(tx, c.target.urn);
        await checkVersion(tx, c);
      }
      const result = await writeAspect(tx, aspectWrite(c.target, c.aspect.name, c.value, systemMetadata, principal, mode));
      return written(c, result, c.value, systemMetadata, principal, now);
    }
    // Under the entity's lock: the value a patch or refresh starts from, and what the hooks check against.
    const previous = await lockAndRead(tx, c.target.urn, c.aspect.name);
    if (c.conditions?.version !== undefined) await checkVersion(tx, c);
    // The state a patch's base needs, read once under the lock for both the base and the check.
    const reader = c.kind === 'patch' ? hooks.find((h) => h.patchBase) : undefined;
    const state = reader && previous ? (await reader.readState([intentOf(c)], tx))[0]!.state : undefined;
    const value = await startingValue(hooks, c, previous, tx, reader, state);
    if (value === NOTHING) return undefined;
    const pending: PendingWrite = { target: c.target, aspect: c.aspect, kind: c.kind, value, patch: c.patch?.ops, previous, principal, entityCreatedHere: false };
    const guards: Guard[] = [];
    let shown: unknown;
    for (const h of hooks) {
      const checked = await h.check(pending, tx, h === reader ? state : undefined);
      pending.value = checked.value;
      for (const g of checked.guards ?? []) guards.push(g);
      shown = checked.shown;
    }
    const result = await writeAspect(tx, { ...aspectWrite(c.target, c.aspect.name, pending.value, systemMetadata, principal, mode), guards });
    for (const h of hooks) await h.afterWrite?.(pending, pending.value, tx);
    return written(c, result, pending.value, systemMetadata, principal, now, shown);
  }
}
