/**
 * What the search index holds of each structured property follows its definition: `search_properties`
 * records what is indexed of a property (its field, the field's type, its entity types, whether it is
 * active), and the dispatcher (outbox.ts) compares that with the definition whenever the property
 * changes. When they differ, the row is brought up to date and every entity holding the property is
 * queued again, its document being built differently now (values hidden, shown, or under another field).
 */
import { query, type Tx } from '../db/pool.ts';
import { loadProperties } from '../properties/propertyStore.ts';
import { propertyEntityTypes, propertyField, type FieldSpec } from './fields.ts';

/**
 * Structured properties whose definition or status changed: their fields are added to the backend
 * for their entity types (`ensureFields`), and when what is indexed of them changed, their holders are
 * queued again.
 */
export async function indexedPropertiesChanged(tx: Tx, urns: string[], ensureFields: (entityType: string, fields: FieldSpec[]) => Promise<void>): Promise<void> {
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
    if (now?.active) for (const type of now.entity_types) await ensureFields(type, [field!]);
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
