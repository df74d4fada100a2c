/**
 * The categories of change a timeline reports, as DataHub names them (its `ChangeCategory`), and which
 * aspects each one is computed from. A category is asked for in any case, with `_`, `-` or a space
 * between its words (`technical-schema`); `OWNER` is `OWNERSHIP` (DataHub's 0.14 CLI sends `OWNER`, the
 * name DataHub's server had before; 1.x sends `OWNERSHIP`).
 *
 *   parseCategories(['tag', 'Glossary Term', 'OWNER']) // → ['TAG', 'GLOSSARY_TERM', 'OWNERSHIP']
 *   parseCategories(['RUN'])                           // → 400 naming the categories served
 */
import type { EntitySpec } from '../registry/registry.ts';
import { SvcError } from '../shared/errors.ts';

/** The categories svc computes, in DataHub's names. */
export const CHANGE_CATEGORIES = [
  'TAG',
  'GLOSSARY_TERM',
  'OWNERSHIP',
  'DOCUMENTATION',
  'TECHNICAL_SCHEMA',
  'DOMAIN',
  'STRUCTURED_PROPERTY',
  'DEPRECATION',
  'LIFECYCLE',
  'APPLICATION',
  'ASSET_MEMBERSHIP',
] as const;

export type ChangeCategory = (typeof CHANGE_CATEGORIES)[number];

const ALIASES: ReadonlyMap<string, ChangeCategory> = new Map([['OWNER', 'OWNERSHIP']]);
const KNOWN: ReadonlySet<string> = new Set(CHANGE_CATEGORIES);

/** The most categories one request may name (each is listed once; repeats are dropped). */
const MAX_NAMED = 64;

/**
 * The categories named (each item may list several, comma-separated, as the CLI sends them), each
 * once, in the order of {@link CHANGE_CATEGORIES}; VALIDATION naming the categories when one is unknown
 * or none is named.
 */
export function parseCategories(named: readonly string[] | undefined): ChangeCategory[] {
  const items = (named ?? []).flatMap((n) => n.split(',')).map((n) => n.trim()).filter((n) => n !== '');
  const served = CHANGE_CATEGORIES.join(', ');
  if (items.length === 0) throw SvcError.validation([`query parameter categories is required: one or more of ${served}`]);
  const unknown: string[] = [];
  const wanted = new Set<ChangeCategory>();
  for (const item of items.slice(0, MAX_NAMED)) {
    const name = item.toUpperCase().replace(/[\s-]+/g, '_');
    const category = ALIASES.get(name) ?? (KNOWN.has(name) ? (name as ChangeCategory) : undefined);
    if (category) wanted.add(category);
    else unknown.push(item.length > 60 ? `${item.slice(0, 60)}…` : item);
  }
  if (items.length > MAX_NAMED) unknown.push(`(${items.length} categories named; at most ${MAX_NAMED})`);
  if (unknown.length) {
    throw SvcError.validation([`query parameter categories: unknown category ${unknown.map((u) => JSON.stringify(u)).join(', ')}; the categories are ${served} (OWNER is OWNERSHIP)`]);
  }
  return CHANGE_CATEGORIES.filter((c) => wanted.has(c));
}

/** Aspects whose `description` (or a glossary term's `definition`) is an entity's documentation. */
const DOCUMENTED = /^(editable\w*Properties|\w+Properties|\w+Info)$/;

/** The aspects each category reads, of those an entity type has (the key aspect for LIFECYCLE's creation). */
export function aspectsFor(spec: EntitySpec, category: ChangeCategory): string[] {
  const has = (name: string) => spec.aspects.includes(name);
  const some = (...names: string[]) => names.filter(has);
  switch (category) {
    case 'TAG':
      return some('globalTags', 'schemaMetadata', 'editableSchemaMetadata');
    case 'GLOSSARY_TERM':
      return some('glossaryTerms', 'schemaMetadata', 'editableSchemaMetadata');
    case 'OWNERSHIP':
      return some('ownership');
    case 'DOCUMENTATION':
      return [...some('institutionalMemory', 'schemaMetadata', 'editableSchemaMetadata'), ...spec.aspects.filter((a) => DOCUMENTED.test(a) && a !== 'structuredProperties')];
    case 'TECHNICAL_SCHEMA':
      return some('schemaMetadata');
    case 'DOMAIN':
      return some('domains');
    case 'STRUCTURED_PROPERTY':
      return some('structuredProperties');
    case 'DEPRECATION':
      return some('deprecation');
    case 'LIFECYCLE':
      return [spec.keyAspect, ...some('status')];
    case 'APPLICATION':
      return some('applications');
    case 'ASSET_MEMBERSHIP':
      return some('dataProductProperties');
  }
}
