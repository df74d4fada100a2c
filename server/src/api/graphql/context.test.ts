import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Principal } from '../../auth/authorize.ts';
import type { Catalog } from '../../catalog.ts';
import type { EntityRecord } from '../../entities/entityService.ts';
import type { StoredAspect } from '../../entities/aspectStore.ts';
import { aspectOf, createContext, primeEntity } from './context.ts';

const URN = 'urn:li:structuredProperty:ctx.tier';
const aspect = (name: string, value: unknown): StoredAspect => ({ urn: URN, aspect: name, version: 0, value, systemMetadata: {}, createdOn: new Date(0), createdBy: 'test' });

/** A catalog whose entity reads answer from a fixed record, counting the reads (the loader's logic alone is under test). */
function catalogReading(record: EntityRecord): { catalog: Catalog; reads: string[][] } {
  const reads: string[][] = [];
  const entities = {
    async getMany(_p: Principal, targets: { urn: string }[], names?: string[]) {
      reads.push(targets.map((t) => t.urn));
      return targets.some((t) => t.urn === record.urn) ? [{ urn: record.urn, aspects: new Map([...record.aspects].filter(([n]) => !names || names.includes(n))) }] : [];
    },
  };
  return { catalog: { entities } as unknown as Catalog, reads };
}

test('an entity primed with some aspects answers those, and is read again whole for another', async () => {
  const full: EntityRecord = {
    urn: URN,
    aspects: new Map([
      ['structuredPropertyKey', aspect('structuredPropertyKey', { id: 'ctx.tier' })],
      ['propertyDefinition', aspect('propertyDefinition', { qualifiedName: 'ctx.tier' })],
      ['status', aspect('status', { removed: false })],
    ]),
  };
  const { catalog, reads } = catalogReading(full);
  const ctx = createContext(catalog, { actor: 'urn:li:corpuser:test', roles: ['admin'] } as unknown as Principal);
  // As a search primes it: read with its status only.
  primeEntity(ctx, { urn: URN, aspects: new Map([['status', full.aspects.get('status')!]]) }, new Set(['status']));
  const primed = aspectOf(ctx, URN, 'status');
  assert.ok(!(primed instanceof Promise), 'an aspect the search read is answered at once');
  assert.deepEqual(primed, { removed: false });
  assert.equal(reads.length, 0, 'an aspect the search read is not read again');
  assert.deepEqual(await aspectOf(ctx, URN, 'propertyDefinition'), { qualifiedName: 'ctx.tier' });
  assert.deepEqual(reads, [[URN]], 'an aspect the search did not read: the entity is read again');
  assert.deepEqual(await aspectOf(ctx, URN, 'status'), { removed: false });
  assert.equal(reads.length, 1, 'read whole once, it answers every aspect');
});
