/**
 * Which differ computes the events of a category from an aspect (see categories.ts for which aspects
 * a category reads): one place that joins aspects, categories and differs.
 */
import { applicationChanges, assetChanges, deprecationChanges, domainChanges, event, lifecycleChanges, ownerChanges, structuredPropertyChanges, tagChanges, termChanges } from './associationDiffers.ts';
import type { ChangeCategory } from './categories.ts';
import { compareByKey, items, short, textOf, type Differ } from './changes.ts';
import { descriptionChanges, fieldDiffers, technicalSchemaChanges } from './schemaDiffers.ts';

/** `institutionalMemory`: `{elements: [{url, description}]}`, links documenting the entity, by URL. */
const linkChanges: Differ = (before, after, ctx) => {
  const key = (l: unknown) => textOf(l, 'url');
  const { removed, added, modified } = compareByKey(items(before, 'elements'), items(after, 'elements'), key);
  const params = (l: unknown) => ({ institutionalMemoryUrl: textOf(l, 'url')!, institutionalMemoryDescription: textOf(l, 'description') ?? '' });
  return [
    ...removed.map((l) => event(ctx, 'REMOVE', 'MINOR', `link ${short(textOf(l, 'url')!)} removed`, textOf(l, 'url'), params(l))),
    ...added.map((l) => event(ctx, 'ADD', 'MINOR', `link ${short(textOf(l, 'url')!)} added`, textOf(l, 'url'), params(l))),
    ...modified.map(([, l]) => event(ctx, 'MODIFY', 'MINOR', `link ${short(textOf(l, 'url')!)} changed`, textOf(l, 'url'), params(l))),
  ];
};

const SCHEMA_FIELDS = fieldDiffers('fields');
const EDITABLE_FIELDS = fieldDiffers('editableSchemaFieldInfo');

/** The differ of `category` for `aspect` of an entity type whose key aspect is `keyAspect`; undefined when the category does not read that aspect. */
export function differFor(category: ChangeCategory, aspect: string, keyAspect: string): Differ | undefined {
  switch (category) {
    case 'TAG':
      return aspect === 'globalTags' ? tagChanges : aspect === 'schemaMetadata' ? SCHEMA_FIELDS.TAG : aspect === 'editableSchemaMetadata' ? EDITABLE_FIELDS.TAG : undefined;
    case 'GLOSSARY_TERM':
      return aspect === 'glossaryTerms' ? termChanges : aspect === 'schemaMetadata' ? SCHEMA_FIELDS.GLOSSARY_TERM : aspect === 'editableSchemaMetadata' ? EDITABLE_FIELDS.GLOSSARY_TERM : undefined;
    case 'OWNERSHIP':
      return aspect === 'ownership' ? ownerChanges : undefined;
    case 'DOCUMENTATION':
      if (aspect === 'institutionalMemory') return linkChanges;
      if (aspect === 'schemaMetadata') return SCHEMA_FIELDS.DOCUMENTATION;
      if (aspect === 'editableSchemaMetadata') return EDITABLE_FIELDS.DOCUMENTATION;
      return aspect === 'glossaryTermInfo' ? both(descriptionChanges('definition'), descriptionChanges()) : descriptionChanges();
    case 'TECHNICAL_SCHEMA':
      return aspect === 'schemaMetadata' ? technicalSchemaChanges : undefined;
    case 'DOMAIN':
      return aspect === 'domains' ? domainChanges : undefined;
    case 'STRUCTURED_PROPERTY':
      return aspect === 'structuredProperties' ? structuredPropertyChanges : undefined;
    case 'DEPRECATION':
      return aspect === 'deprecation' ? deprecationChanges : undefined;
    case 'LIFECYCLE':
      return aspect === keyAspect || aspect === 'status' ? lifecycleChanges(keyAspect, aspect) : undefined;
    case 'APPLICATION':
      return aspect === 'applications' ? applicationChanges : undefined;
    case 'ASSET_MEMBERSHIP':
      return aspect === 'dataProductProperties' ? assetChanges : undefined;
  }
}

function both(a: Differ, b: Differ): Differ {
  return (before, after, ctx) => [...a(before, after, ctx), ...b(before, after, ctx)];
}
