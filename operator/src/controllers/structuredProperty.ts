/**
 * StructuredProperty: makes the catalog hold the definition an object declares, and report what it
 * holds. Level-triggered: every reconcile reads the object and the server and closes the gap, so a
 * missed event, a restart or a change made through the API (drift) is repaired the same way.
 *
 * Order of a reconcile:
 * 1. unmanaged (`catalog.svc.dev/managed: "false"`): release the finalizer, touch nothing;
 * 2. deleting: apply `deletionPolicy` (Soft, Hard and wait for the value cleanup, Orphan), then
 *    release the finalizer; an object that never owned its qualified name deletes nothing;
 * 3. the finalizer first, so that no definition is written that a deletion could miss;
 * 4. a qualified name claimed by an older object: `ResourceConflict`, nothing written;
 * 5. restore a soft-deleted definition, write the spec when the server differs, report the status.
 *
 * A rejection by the server (a breaking change without a greater version, an unknown entity type) is
 * reported and not retried until the spec changes; an outage, or a conflict with the catalog's state
 * (409: the values of a hard-deleted property of that name still being removed), is retried with
 * backoff.
 *
 * The server never lowers a definition's version (a lower one is kept as the higher): the spec is
 * compared with what the server holds as the server would store it, so a lowered `spec.version` is
 * written once, not at every resync.
 */
import type { Logger } from 'pino';
import { normalizeDataType, normalizeEntityType, storedDefinition } from '../../../server/src/contract/definitions.ts';
import { CatalogClient, CatalogError, type Definition } from '../catalog.ts';
import { CustomResources, FINALIZER, isManaged, keyOf, type StructuredProperty } from '../resources.ts';
import { findCondition, type ConditionUpdate } from '../runtime/conditions.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import { sameJson } from '../runtime/sameJson.ts';

const URN_PREFIX = 'urn:li:structuredProperty:';
/** Reasons that mean "the server refused this spec": not retried until the spec changes. */
const REFUSED = new Set(['BreakingChangeRejected', 'InvalidSpec']);

export interface StructuredPropertyDeps {
  resources: CustomResources<StructuredProperty>;
  informer: Informer<StructuredProperty>;
  catalog: CatalogClient;
  events: EventRecorder;
  log: Logger;
  /** How soon a synced object is compared with the server again (drift). */
  resyncMs: number;
  /** How soon a hard delete's value cleanup is looked at again. */
  pollMs: number;
}

type Status = NonNullable<StructuredProperty['status']>;

/** The URN of the definition an object declares. */
export const urnOf = (o: StructuredProperty) => `${URN_PREFIX}${o.spec.qualifiedName}`;

/** The `propertyDefinition` aspect for a spec, with short forms written in full as the server stores them. */
export function definitionOf(spec: StructuredProperty['spec']): Definition {
  const number = /^(urn:li:datatype:)?(svc\.)?number$/i.test(spec.valueType);
  const d: Definition = {
    qualifiedName: spec.qualifiedName,
    valueType: normalizeDataType(spec.valueType),
    entityTypes: spec.entityTypes.map(normalizeEntityType),
    cardinality: spec.cardinality ?? 'SINGLE',
  };
  if (spec.allowedValues) {
    d.allowedValues = spec.allowedValues.map((a) => {
      const value = number || a.stringValue === undefined ? { double: Number(a.numberValue) } : { string: a.stringValue };
      return a.description === undefined ? { value } : { value, description: a.description };
    });
  }
  if (spec.displayName !== undefined) d.displayName = spec.displayName;
  if (spec.description !== undefined) d.description = spec.description;
  if (spec.immutable !== undefined) d.immutable = spec.immutable;
  if (spec.version !== undefined) d.version = spec.version;
  return d;
}

/**
 * Whether the server holds the definition: `wanted` as the server would store it over `stored` (an
 * absent cardinality is SINGLE, a lower version keeps the stored one).
 */
export function sameDefinition(stored: Definition, wanted: Definition): boolean {
  const asStored = storedDefinition(wanted, stored);
  return sameJson({ ...stored, cardinality: stored.cardinality ?? 'SINGLE' }, { ...asStored, cardinality: asStored.cardinality ?? 'SINGLE' });
}

/** `a` claimed the qualified name before `b`: created earlier, or at the same second and first by namespace/name. */
function olderThan(a: StructuredProperty, b: StructuredProperty): boolean {
  const ta = new Date(a.metadata.creationTimestamp ?? 0).getTime();
  const tb = new Date(b.metadata.creationTimestamp ?? 0).getTime();
  return ta !== tb ? ta < tb : keyOf(a) < keyOf(b);
}

export class StructuredPropertyReconciler {
  constructor(private readonly deps: StructuredPropertyDeps) {}

  /** The older managed object that claims the same qualified name, if any. */
  owner(obj: StructuredProperty): StructuredProperty | undefined {
    return this.deps.informer
      .list()
      .filter((o) => o !== obj && keyOf(o) !== keyOf(obj) && o.spec.qualifiedName === obj.spec.qualifiedName && isManaged(o) && olderThan(o, obj))
      .sort((a, b) => (olderThan(a, b) ? -1 : 1))[0];
  }

  /** Keys of the other objects that declare the same qualified name (to look at when one goes away). */
  rivals(obj: StructuredProperty): string[] {
    return this.deps.informer
      .list()
      .filter((o) => keyOf(o) !== keyOf(obj) && o.spec.qualifiedName === obj.spec.qualifiedName)
      .map(keyOf);
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const obj = this.deps.informer.get(key);
    if (!obj) return;
    if (!isManaged(obj)) return this.unmanaged(obj);
    const owner = this.owner(obj);
    if (obj.metadata.deletionTimestamp) return this.finalize(obj, owner);
    if (!obj.metadata.finalizers?.includes(FINALIZER)) {
      // The patch brings a watch event; the next reconcile carries on from there.
      await this.deps.resources.addFinalizer(obj);
      return;
    }
    if (owner) {
      const message = `the qualified name ${obj.spec.qualifiedName} is already declared by ${keyOf(owner)}; this object writes nothing until that one is deleted or unmanaged`;
      if (findCondition(obj.status?.conditions, 'Ready')?.reason !== 'ResourceConflict') {
        await this.deps.events.record(obj, 'Warning', 'ResourceConflict', 'Reconcile', message);
      }
      await this.writeStatus(obj, { urn: undefined }, [
        { type: 'Ready', status: 'False', reason: 'ResourceConflict', message },
        { type: 'Synced', status: 'False', reason: 'ResourceConflict', message },
      ]);
      // The owner's deletion or release queues this object (operator.ts); the resync is a safety net.
      return { requeueAfterMs: this.deps.resyncMs };
    }
    return this.sync(obj);
  }

  private async sync(obj: StructuredProperty): Promise<ReconcileResult | void> {
    const generation = obj.metadata.generation;
    const ready = findCondition(obj.status?.conditions, 'Ready');
    // A spec the server refused stays refused until it changes: no retry loop.
    if (obj.status?.observedGeneration === generation && ready?.status === 'False' && REFUSED.has(ready.reason)) return;
    const urn = urnOf(obj);
    const wanted = definitionOf(obj.spec);
    try {
      const current = await this.deps.catalog.definition(urn);
      let stored = current?.definition;
      let action: 'Created' | 'Updated' | 'Adopted' | 'Restored' | undefined;
      const notes = { Created: 'created the definition', Updated: 'wrote the spec over a different definition on the server', Adopted: 'adopted the existing definition and wrote the spec', Restored: 'restored the soft-deleted definition' };
      const restored = current?.removed === true;
      if (restored) {
        await this.deps.catalog.setRemoved(urn, false);
        action = 'Restored';
      }
      if (!stored || !sameDefinition(stored, wanted)) {
        // A restore followed by a write is two things done: each has its Event.
        if (restored) await this.deps.events.record(obj, 'Normal', 'Restored', 'Reconcile', `${notes.Restored} ${urn}`);
        stored = await this.deps.catalog.writeDefinition(urn, wanted);
        action = !current?.definition ? 'Created' : !obj.status?.urn ? 'Adopted' : 'Updated';
      }
      if (action) {
        await this.deps.events.record(obj, 'Normal', action, 'Reconcile', `${notes[action]} ${urn}`);
        this.deps.log.info({ key: keyOf(obj), urn, action, restored }, 'structured property synced');
      }
      await this.writeStatus(
        obj,
        { urn, version: stored.version, valueType: stored.valueType, entityTypes: stored.entityTypes, ...(action || !obj.status?.lastSyncTime ? { lastSyncTime: new Date().toISOString() } : {}) },
        [
          { type: 'Ready', status: 'True', reason: 'Synced', message: `the server holds the spec as ${urn}` },
          { type: 'Synced', status: 'True', reason: action ?? 'UpToDate', message: action ? `${action}${restored && action !== 'Restored' ? ' (restored first)' : ''} ${urn}` : `${urn} matches the spec` },
        ],
      );
      return { requeueAfterMs: this.deps.resyncMs };
    } catch (err) {
      if (!(err instanceof CatalogError)) throw err;
      if (err.kind === 'rejected') {
        // The server names a refusal that only a greater version lifts (contract/errors.ts, REASONS).
        const reason = err.reason === 'BreakingChange' ? 'BreakingChangeRejected' : 'InvalidSpec';
        const hint = reason === 'BreakingChangeRejected' ? ' (a breaking change needs a greater spec.version)' : '';
        await this.deps.events.record(obj, 'Warning', reason, 'Reconcile', `${err.message}${hint}`);
        await this.writeStatus(obj, {}, [
          { type: 'Ready', status: 'False', reason, message: `the server refused the spec: ${err.message}${hint}` },
          { type: 'Synced', status: 'False', reason, message: err.message },
        ]);
        return;
      }
      await this.retrying(obj, err);
      throw err;
    }
  }

  /** Deletion: the policy's effect on the catalog, then the finalizer goes. */
  private async finalize(obj: StructuredProperty, owner: StructuredProperty | undefined): Promise<ReconcileResult | void> {
    if (!obj.metadata.finalizers?.includes(FINALIZER)) return;
    const policy = obj.spec.deletionPolicy ?? 'Soft';
    const urn = urnOf(obj);
    // An object that lost the conflict never wrote the definition: deleting it touches nothing.
    if (!owner && policy !== 'Orphan') {
      try {
        const current = await this.deps.catalog.definition(urn);
        if (policy === 'Soft' && current && !current.removed) await this.deps.catalog.setRemoved(urn, true);
        if (policy === 'Hard') {
          if (current) await this.deps.catalog.hardDelete(urn);
          if (await this.deps.catalog.cleanupPending(urn)) {
            await this.writeStatus(obj, {}, [{ type: 'Ready', status: 'False', reason: 'Deleting', message: `hard deleted ${urn}; waiting for its values to be removed` }]);
            return { requeueAfterMs: this.deps.pollMs };
          }
        }
      } catch (err) {
        if (err instanceof CatalogError) await this.retrying(obj, err);
        throw err;
      }
    }
    await this.deps.resources.removeFinalizer(obj);
    const what = owner ? 'nothing to delete (the name belongs to another object)' : { Soft: `soft deleted ${urn}`, Hard: `hard deleted ${urn} and its values`, Orphan: `left ${urn} in the catalog` }[policy];
    this.deps.log.info({ key: keyOf(obj), urn, policy }, 'structured property finalized');
    await this.deps.events.record(obj, 'Normal', 'Deleted', 'Delete', what);
  }

  private async unmanaged(obj: StructuredProperty): Promise<void> {
    if (obj.metadata.finalizers?.includes(FINALIZER)) await this.deps.resources.removeFinalizer(obj);
    if (obj.metadata.deletionTimestamp) return;
    const message = 'catalog.svc.dev/managed is "false": the operator leaves the definition as it is';
    await this.writeStatus(obj, {}, [
      { type: 'Ready', status: 'Unknown', reason: 'Unmanaged', message },
      { type: 'Synced', status: 'Unknown', reason: 'Unmanaged', message },
    ]);
  }

  /** A call that is retried with backoff: a 409 (Conflict, Ready=False), an outage or a refused token (Ready=Unknown). */
  private async retrying(obj: StructuredProperty, err: CatalogError): Promise<void> {
    if (err.kind === 'conflict') {
      if (findCondition(obj.status?.conditions, 'Ready')?.reason !== 'Conflict') {
        await this.deps.events.record(obj, 'Warning', 'Conflict', 'Reconcile', `${err.message} (retried)`);
      }
      await this.writeStatus(obj, {}, [
        { type: 'Ready', status: 'False', reason: 'Conflict', message: `the server refused the request for now (409), retrying: ${err.message}` },
        { type: 'Synced', status: 'False', reason: 'Conflict', message: err.message },
      ]).catch(() => undefined);
      return;
    }
    const reason = err.kind === 'unauthorized' ? 'Unauthorized' : 'ServerUnavailable';
    await this.writeStatus(obj, {}, [
      { type: 'Ready', status: 'Unknown', reason, message: err.message },
      { type: 'Synced', status: 'Unknown', reason, message: err.message },
    ]).catch(() => undefined);
  }

  private writeStatus(obj: StructuredProperty, facts: Partial<Status>, updates: ConditionUpdate[]): Promise<unknown> {
    return this.deps.resources.updateStatus(obj, facts, updates);
  }
}
