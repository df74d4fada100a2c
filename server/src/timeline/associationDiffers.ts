/**
 * Differs of the aspects that associate an entity with other entities (tags, glossary terms, owners,
 * domains, applications, a data product's assets, structured property values) and of its state
 * (deprecation, soft deletion, creation): each association added is an ADD, each removed a REMOVE.
 *
 *   tagChanges(undefined, {tags: [{tag: 'urn:li:tag:pii'}]}, ctx)
 *   // → [{category: 'TAG', operation: 'ADD', modifier: 'urn:li:tag:pii', parameters: {tagUrn: …}, semVerChange: 'MINOR', …}]
 */
import { compareByKey, field, items, same, textOf, type ChangeEvent, type ChangeOperation, type DiffContext, type Differ, type SemanticChange } from './changes.ts';

/** An event of the context's category on the context's entity. */
export function event(ctx: DiffContext, operation: ChangeOperation, semVerChange: SemanticChange, description: string, modifier?: string, parameters?: Record<string, unknown>, entityUrn = ctx.entityUrn): ChangeEvent {
  return { entityUrn, category: ctx.category, operation, ...(modifier === undefined ? {} : { modifier }), ...(parameters === undefined ? {} : { parameters }), auditStamp: ctx.auditStamp, semVerChange, description };
}

/**
 * A differ of a list of associations: `list` reads them from the aspect, `urnOf` names each one's
 * target, `parameters` what an event says of it; `what` is the kind's word in descriptions.
 */
function associations(list: (value: unknown) => unknown[], urnOf: (item: unknown) => string | undefined, what: string, parameters: (item: unknown, urn: string) => Record<string, unknown>): Differ {
  return (before, after, ctx) => {
    const { removed, added } = compareByKey(list(before), list(after), urnOf);
    const events: ChangeEvent[] = [];
    for (const item of removed) {
      const urn = urnOf(item)!;
      events.push(event(ctx, 'REMOVE', 'MINOR', `${what} ${urn} removed`, urn, parameters(item, urn)));
    }
    for (const item of added) {
      const urn = urnOf(item)!;
      events.push(event(ctx, 'ADD', 'MINOR', `${what} ${urn} added`, urn, parameters(item, urn)));
    }
    return events;
  };
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `globalTags`: `{tags: [{tag}]}`. */
export const tagChanges = associations((v) => items(v, 'tags'), (t) => textOf(t, 'tag'), 'tag', (_t, urn) => ({ tagUrn: urn }));

/** `glossaryTerms`: `{terms: [{urn}]}`. */
export const termChanges = associations((v) => items(v, 'terms'), (t) => textOf(t, 'urn'), 'glossary term', (_t, urn) => ({ termUrn: urn }));

/** `domains`: `{domains: [urn]}`. */
export const domainChanges = associations((v) => items(v, 'domains'), text, 'domain', (_d, urn) => ({ domainUrn: urn }));

/** `applications`: `{applications: [urn]}`. */
export const applicationChanges = associations((v) => items(v, 'applications'), text, 'application', (_a, urn) => ({ applicationUrn: urn }));

/** `dataProductProperties`: its `assets` (`[{destinationUrn}]`), the entities the data product holds. */
export const assetChanges = associations((v) => items(v, 'assets'), (a) => textOf(a, 'destinationUrn'), 'asset', (_a, urn) => ({ assetUrn: urn }));

/**
 * `ownership`: `{owners: [{owner, type, typeUrn?}]}`. An owner is one owner of one type: the same
 * owner of another type is another association (its old one removed, its new one added).
 */
export const ownerChanges: Differ = (before, after, ctx) => {
  const key = (o: unknown) => {
    const owner = textOf(o, 'owner');
    return owner === undefined ? undefined : `${owner} ${textOf(o, 'type') ?? ''} ${textOf(o, 'typeUrn') ?? ''}`;
  };
  const params = (o: unknown) => {
    const typeUrn = textOf(o, 'typeUrn');
    return { ownerUrn: textOf(o, 'owner')!, ownerType: textOf(o, 'type') ?? 'NONE', ...(typeUrn === undefined ? {} : { ownerTypeUrn: typeUrn }) };
  };
  const { removed, added } = compareByKey(items(before, 'owners'), items(after, 'owners'), key);
  const line = (o: unknown) => `owner ${textOf(o, 'owner')} (${textOf(o, 'typeUrn') ?? textOf(o, 'type') ?? 'NONE'})`;
  return [
    ...removed.map((o) => event(ctx, 'REMOVE', 'MINOR', `${line(o)} removed`, textOf(o, 'owner'), params(o))),
    ...added.map((o) => event(ctx, 'ADD', 'MINOR', `${line(o)} added`, textOf(o, 'owner'), params(o))),
  ];
};

/** `structuredProperties`: `{properties: [{propertyUrn, values}]}`; a property whose values change is a MODIFY. */
export const structuredPropertyChanges: Differ = (before, after, ctx) => {
  const { removed, added, modified } = compareByKey(items(before, 'properties'), items(after, 'properties'), (p) => textOf(p, 'propertyUrn'));
  const params = (p: unknown) => ({ propertyUrn: textOf(p, 'propertyUrn')!, propertyValues: items(p, 'values') });
  const urn = (p: unknown) => textOf(p, 'propertyUrn')!;
  return [
    ...removed.map((p) => event(ctx, 'REMOVE', 'MINOR', `structured property ${urn(p)} removed`, urn(p), params(p))),
    ...added.map((p) => event(ctx, 'ADD', 'MINOR', `structured property ${urn(p)} set`, urn(p), params(p))),
    ...modified.filter(([was, is]) => !same(items(was, 'values'), items(is, 'values'))).map(([, p]) => event(ctx, 'MODIFY', 'MINOR', `structured property ${urn(p)} values changed`, urn(p), params(p))),
  ];
};

/** `deprecation`: `{deprecated, note, decommissionTime?}`; a change of `deprecated` (its absence is false). */
export const deprecationChanges: Differ = (before, after, ctx) => {
  const was = field(before, 'deprecated') === true;
  const is = field(after, 'deprecated') === true;
  if (was === is) return [];
  const note = textOf(after, 'note');
  return [event(ctx, 'MODIFY', 'MINOR', is ? 'deprecated' : 'no longer deprecated', undefined, { status: is ? 'DEPRECATED' : 'ACTIVE', ...(is && note ? { note } : {}) })];
};

/** `status` (soft deletion, `{removed}`; its absence is false) and the key aspect (the entity's creation). */
export const lifecycleChanges = (keyAspect: string, aspect: string): Differ => {
  if (aspect === keyAspect) return (before, after, ctx) => (before === undefined && after !== undefined ? [event(ctx, 'CREATE', 'MINOR', 'entity created')] : []);
  return (before, after, ctx) => {
    const was = field(before, 'removed') === true;
    const is = field(after, 'removed') === true;
    if (was === is) return [];
    return [is ? event(ctx, 'SOFT_DELETE', 'MAJOR', 'entity soft-deleted') : event(ctx, 'REINSTATE', 'MINOR', 'entity reinstated')];
  };
};
