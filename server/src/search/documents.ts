/**
 * Search documents, built from the primary store: an entity's key-aspect fields, its soft delete, the
 * fields of its common aspects (fields.ts, ASPECT_FIELDS: owners, tags, description, …), and
 * the values of its structured properties as reads show them (a soft-deleted property's values, and
 * values written under an older version of a definition, are hidden; see propertyHooks.ts), each
 * under its property's current field (fields.ts).
 */
import { SYSTEM } from '../auth/authorize.ts';
import type { Db } from '../db/pool.ts';
import type { EntityService } from '../entities/entityService.ts';
import { isRemoved } from '../entities/softDelete.ts';
import { loadProperties } from '../properties/propertyStore.ts';
import type { StructuredProperties } from '../properties/types.ts';
import { registry, type EntityUrn } from '../registry/registry.ts';
import type { DocumentRef, SearchDocument } from './backend.ts';
import { aspectFieldsOf, aspectFieldValues, documentValue, propertyField, type FieldType } from './fields.ts';

export interface Documents {
  docs: SearchDocument[];
  /** Entities that no longer exist: their documents go. */
  gone: DocumentRef[];
}

/** The documents of the given entities, as the primary store holds them now. */
export async function buildDocuments(entities: EntityService, db: Db, urns: string[]): Promise<Documents> {
  const targets: EntityUrn[] = [];
  for (const urn of urns) {
    try {
      targets.push(registry.resolveUrn(urn));
    } catch {
      // Not an entity URN (nothing stored under it is searchable).
    }
  }
  const aspects = new Set(['status', 'structuredProperties']);
  for (const t of new Set(targets.map((x) => x.spec))) {
    aspects.add(t.keyAspect);
    for (const f of aspectFieldsOf(t)) for (const a of f.aspects) if (t.aspects.includes(a)) aspects.add(a);
  }
  const records = await entities.getMany(SYSTEM, targets, [...aspects]);
  const found = new Map(records.map((r) => [r.urn, r]));
  const propertyUrns = records.flatMap((r) => ((r.aspects.get('structuredProperties')?.value as StructuredProperties | undefined)?.properties ?? []).map((p) => p.propertyUrn));
  const states = await loadProperties(db, propertyUrns);
  const docs: SearchDocument[] = [];
  const gone: DocumentRef[] = [];
  for (const t of targets) {
    const record = found.get(t.urn);
    if (!record) {
      gone.push({ entityType: t.spec.name, urn: t.urn });
      continue;
    }
    const fields = new Map<string, { type: FieldType; values: (string | number)[] }>();
    const key = record.aspects.get(t.spec.keyAspect)?.value as Record<string, unknown> | undefined;
    for (const f of t.spec.keyFields) {
      const v = key?.[f.name];
      if (typeof v === 'string' && v !== '') fields.set(f.name, { type: 'keyword', values: [v] });
    }
    for (const f of aspectFieldsOf(t.spec)) {
      const values = new Set(fields.get(f.name)?.values);
      for (const a of f.aspects) {
        const value = record.aspects.get(a)?.value;
        if (value !== undefined) for (const v of aspectFieldValues(f, value)) values.add(v);
      }
      if (values.size) fields.set(f.name, { type: f.type, values: [...values] });
    }
    const assigned = (record.aspects.get('structuredProperties')?.value as StructuredProperties | undefined)?.properties ?? [];
    for (const a of assigned) {
      const state = states.get(a.propertyUrn);
      const field = state && !state.softDeleted ? propertyField(state.definition) : undefined;
      if (!field) continue;
      const values = [...new Set(a.values.map((v) => documentValue(field.type, v)).filter((v) => v !== undefined))];
      if (values.length) fields.set(field.name, { type: field.type, values });
    }
    docs.push({ entityType: t.spec.name, urn: t.urn, removed: isRemoved(record.aspects.get('status')?.value), fields });
  }
  return { docs, gone };
}
