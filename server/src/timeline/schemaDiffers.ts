/**
 * Differs of a dataset's fields: `schemaMetadata` (`{fields: [{fieldPath, nativeDataType, type,
 * nullable, description?, globalTags?, glossaryTerms?}]}`) and `editableSchemaMetadata`
 * (`{editableSchemaFieldInfo: [{fieldPath, description?, globalTags?, glossaryTerms?}]}`). A field
 * added is a MINOR change of the technical schema, one removed or whose type changed a MAJOR one; a
 * field's tags, terms and description are changes of those categories on the field (the event's
 * `entityUrn` is the field's schemaField URN, the dataset its `parentUrn`).
 */
import { tagChanges, termChanges, event } from './associationDiffers.ts';
import { compareByKey, field, fieldUrn, items, same, short, textOf, type ChangeEvent, type DiffContext, type Differ } from './changes.ts';

/** The fields of a schema aspect, keyed by path: `fields` of schemaMetadata, `editableSchemaFieldInfo` of editableSchemaMetadata. */
function fields(value: unknown, list: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const f of items(value, list)) {
    const path = textOf(f, 'fieldPath');
    if (path !== undefined && !out.has(path)) out.set(path, f);
  }
  return out;
}

/** `schemaMetadata`'s fields: added, removed, and changed in type or nullability. */
export const technicalSchemaChanges: Differ = (before, after, ctx) => {
  const { removed, added, modified } = compareByKey(items(before, 'fields'), items(after, 'fields'), (f) => textOf(f, 'fieldPath'));
  const params = (f: unknown) => {
    const path = textOf(f, 'fieldPath')!;
    return { fieldPath: path, fieldUrn: fieldUrn(ctx.entityUrn, path), nullable: field(f, 'nullable') === true, nativeDataType: textOf(f, 'nativeDataType') ?? '' };
  };
  const out: ChangeEvent[] = [];
  for (const f of removed) out.push(event(ctx, 'REMOVE', 'MAJOR', `field ${short(textOf(f, 'fieldPath')!)} removed`, fieldUrn(ctx.entityUrn, textOf(f, 'fieldPath')!), params(f)));
  for (const f of added) out.push(event(ctx, 'ADD', 'MINOR', `field ${short(textOf(f, 'fieldPath')!)} added (${short(textOf(f, 'nativeDataType') ?? '', 60)})`, fieldUrn(ctx.entityUrn, textOf(f, 'fieldPath')!), params(f)));
  for (const [was, is] of modified) {
    const typed = !same(field(was, 'type'), field(is, 'type')) || textOf(was, 'nativeDataType') !== textOf(is, 'nativeDataType');
    const nullable = (field(was, 'nullable') === true) !== (field(is, 'nullable') === true);
    if (!typed && !nullable) continue;
    const path = textOf(is, 'fieldPath')!;
    const what = typed ? `type changed from ${short(textOf(was, 'nativeDataType') ?? '', 60)} to ${short(textOf(is, 'nativeDataType') ?? '', 60)}` : `now ${field(is, 'nullable') === true ? 'nullable' : 'not nullable'}`;
    out.push(event(ctx, 'MODIFY', typed ? 'MAJOR' : 'MINOR', `field ${short(path)} ${what}`, fieldUrn(ctx.entityUrn, path), params(is)));
  }
  return out;
};

/**
 * A differ of something each field holds (its tags, terms or description), for the fields of `list`:
 * `inner` is that thing's differ, run with the field as the entity.
 */
function perField(list: string, inner: Differ): Differ {
  return (before, after, ctx) => {
    const was = fields(before, list);
    const is = fields(after, list);
    const out: ChangeEvent[] = [];
    for (const path of [...new Set([...was.keys(), ...is.keys()])].sort()) {
      const fieldCtx: DiffContext = { ...ctx, entityUrn: fieldUrn(ctx.entityUrn, path) };
      for (const e of inner(was.get(path), is.get(path), fieldCtx)) out.push({ ...e, parameters: { ...e.parameters, fieldPath: path, parentUrn: ctx.entityUrn } });
    }
    return out;
  };
}

/** A field's description: set, changed or removed. */
export const descriptionChanges =
  (name = 'description'): Differ =>
  (before, after, ctx) => {
    const was = textOf(before, name);
    const is = textOf(after, name);
    if (was === is) return [];
    if (is === undefined) return [event(ctx, 'REMOVE', 'MINOR', `${name} removed`, undefined, { description: was })];
    return [event(ctx, was === undefined ? 'ADD' : 'MODIFY', 'MINOR', `${name} ${was === undefined ? 'set' : 'changed'} to "${short(is)}"`, undefined, { description: is })];
  };

const fieldTags = (v: unknown) => field(v, 'globalTags');
const fieldTerms = (v: unknown) => field(v, 'glossaryTerms');

/** The differs of a schema aspect's fields, by category (`list`: the aspect's list of fields). */
export function fieldDiffers(list: 'fields' | 'editableSchemaFieldInfo'): { TAG: Differ; GLOSSARY_TERM: Differ; DOCUMENTATION: Differ } {
  return {
    TAG: perField(list, (b, a, ctx) => tagChanges(fieldTags(b), fieldTags(a), ctx)),
    GLOSSARY_TERM: perField(list, (b, a, ctx) => termChanges(fieldTerms(b), fieldTerms(a), ctx)),
    DOCUMENTATION: perField(list, descriptionChanges()),
  };
}
