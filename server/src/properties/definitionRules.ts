/**
 * The rules a `propertyDefinition` write must pass: DataHub's (its PropertyDefinitionValidator, in its
 * order and with its messages, which clients match), plus svc's stricter ones: valueType and
 * entityTypes must name existing dataType/entityType entities, allowed values must be of the value
 * type and listed when given, a new property's qualifiedName is its URN's id and a dotted name
 * (qualifiedNames.ts), and a version is a real date and time (versions.ts). What version is stored is
 * {@link storedDefinition}'s rule.
 */
import { parseUrn } from '../urn/urn.ts';
import { checkValueType } from './valueRules.ts';
import { cardinalityOf, printValue, sameValue, searchName, VERSIONED_FIELDS, type PropertyDefinition } from './types.ts';
import { qualifiedNameProblem } from './qualifiedNames.ts';
import { compareVersions, suggestedVersion, versionProblem } from './versions.ts';

export interface DefinitionContext {
  /** The property's URN, e.g. `urn:li:structuredProperty:io.acryl.privacy.retentionTime`. */
  urn: string;
  /** The stored definition, when this is an update. */
  previous: PropertyDefinition | undefined;
  /** Whether the property is soft deleted (`status.removed`). */
  softDeleted: boolean;
  /** URNs of the dataType entities that exist. */
  dataTypes: ReadonlySet<string>;
  /** URNs of the entityType entities that exist. */
  entityTypes: ReadonlySet<string>;
  /**
   * For a new property: another property (its URN) whose qualified name has the same search name
   * (types.searchName), soft-deleted or not; its search field would be this one's.
   */
  fieldHolder?: string;
  /** The server's clock (epoch ms), which bounds a version (versions.ts); `Date.now()` when not given. */
  now?: number;
}

/**
 * Whether a breaking change is allowed by the version rule: the new definition has a version, and the
 * old one had none or a lower one (compared case-insensitively; for yyyyMMddhhmmss, chronologically).
 */
export function allowedByVersion(previous: PropertyDefinition, next: PropertyDefinition): boolean {
  return next.version !== undefined && compareVersions(next.version, previous.version) > 0;
}

/**
 * The definition to store for `given` (as written and checked): a version marks the last breaking
 * change, and "written under an older version" must keep meaning "written before that change", so the
 * stored version never decreases. An update without a version, or with a lower one (DataHub accepts a
 * non-breaking change whatever its version, and a breaking one needs a greater version), keeps the
 * current version; an equal or greater one is stored as given.
 *
 *   storedDefinition({ ...d, version: '20200101000000' }, { ...d, version: '20240614080000' }).version // '20240614080000'
 */
export function storedDefinition(given: PropertyDefinition, previous: PropertyDefinition | undefined): PropertyDefinition {
  if (previous?.version === undefined || compareVersions(given.version, previous.version) >= 0) return given;
  return { ...given, version: previous.version };
}

/**
 * Every violation of the definition rules, in DataHub's order, for the definition as written (before
 * {@link storedDefinition}); empty when the write is allowed.
 */
export function checkDefinition(next: PropertyDefinition, ctx: DefinitionContext): string[] {
  const out: string[] = [];
  if (ctx.softDeleted) out.push('Cannot mutate a soft deleted Structured Property Definition');
  // A version the property already has was accepted when it was given (it may predate these rules).
  const now = ctx.now ?? Date.now();
  const versionRefused = next.version !== undefined && next.version !== ctx.previous?.version ? versionProblem(next.version, now) : undefined;
  if (versionRefused) out.push(versionRefused);
  const id = parseUrn(ctx.urn).id;
  if (id.includes(' ')) out.push('Urn ID cannot have spaces');
  if (next.qualifiedName.includes(' ')) out.push('Qualified names cannot have spaces');
  // svc: a property's URN is urn:li:structuredProperty:<qualifiedName> (DataHub's CLI asserts the
  // same); another name would be unusable by its own URN. Checked on creation: an update cannot
  // change the name (below).
  if (!ctx.previous && next.qualifiedName !== id) {
    out.push(`qualifiedName ${next.qualifiedName} must be the id of the urn ${ctx.urn}: the urn of a structured property is urn:li:structuredProperty:<qualifiedName>`);
  }
  // The search fields of versioned properties are under structuredProperties._versioned: a property of
  // that field name would be a value where OpenSearch keeps an object.
  if (searchName(next.qualifiedName) === VERSIONED_FIELDS) {
    out.push(`Qualified name ${next.qualifiedName} is taken by search: structuredProperties.${VERSIONED_FIELDS} holds the fields of versioned properties`);
  } else if (!ctx.previous) {
    // svc: a new name is a dotted name, which search can name as written (qualifiedNames.ts).
    const problem = qualifiedNameProblem(next.qualifiedName);
    if (problem) out.push(problem);
  }
  // Each property has a search field of its own, structuredProperties.<qualified name, . as _>, of
  // one type; DataHub 1.x refuses such collisions with this message.
  if (!ctx.previous && ctx.fieldHolder !== undefined) {
    out.push(
      `Structured property Elasticsearch field '${searchName(next.qualifiedName)}' collides with existing property mapping. ` +
        `Qualified names that differ only by '.' vs '_' normalize to the same field name (proposed qualifiedName='${next.qualifiedName}'). ` +
        `The field is that of ${ctx.fieldHolder}.`,
    );
  }

  const allowedTypes = next.typeQualifier?.allowedTypes;
  if (allowedTypes) {
    const list = `[${allowedTypes.join(', ')}]`;
    const types = allowedTypes.map((t) => {
      try {
        return parseUrn(t).entityType;
      } catch {
        return undefined;
      }
    });
    if (types.includes(undefined)) {
      out.push(`Issue resolving allowedTypes inside of typeQualifier. These must be entity type urns. List of allowedTypes: ${list}`);
    } else if (types.some((t) => t !== 'entityType')) {
      out.push(`Provided allowedType that is not an entityType entity. List of allowedTypes: ${list}`);
    } else if (allowedTypes.some((t) => !ctx.entityTypes.has(t))) {
      out.push(`Provided allowedType that does not exist. List of allowedTypes: ${list}`);
    }
  }
  for (const key of Object.keys(next.typeQualifier ?? {})) {
    if (key !== 'allowedTypes') out.push(`typeQualifier: unknown key "${key}"; the only key is allowedTypes`);
  }

  // svc: the types a definition names must exist (DataHub 0.14 did not check; later versions do).
  if (!ctx.dataTypes.has(next.valueType)) {
    out.push(`Provided valueType ${next.valueType} is not an existing dataType entity; expected one of ${[...ctx.dataTypes].sort().join(', ')}`);
  }
  if (next.entityTypes.length === 0) out.push('entityTypes: must name at least one entity type, e.g. urn:li:entityType:svc.dataset');
  for (const e of next.entityTypes) {
    if (!ctx.entityTypes.has(e)) out.push(`Provided entityType ${e} is not an existing entityType entity, e.g. urn:li:entityType:svc.dataset`);
  }
  // svc: an empty list would allow no value at all. Left as stored on a property that has it already.
  if (next.allowedValues?.length === 0 && ctx.previous?.allowedValues?.length !== 0) {
    out.push('allowedValues: must list at least one value (an empty list would allow none); leave allowedValues out to allow any value of the valueType');
  }
  (next.allowedValues ?? []).forEach((a, i) => {
    const typeProblem = ctx.dataTypes.has(next.valueType) ? checkValueType(`allowedValues[${i}]`, next.valueType, a.value, undefined) : undefined;
    if (typeProblem) out.push(typeProblem);
    if ((next.allowedValues ?? []).findIndex((b) => sameValue(a.value, b.value)) < i) out.push(`allowedValues: ${printValue(a.value)} is listed more than once`);
  });

  const prev = ctx.previous;
  if (prev) {
    const breaking = breakingChanges(prev, next);
    if (prev.qualifiedName !== next.qualifiedName) out.push('Cannot change the fully qualified name of a Structured Property');
    for (const b of breaking) out.push(b);
    // What lifts them, once, after DataHub's messages (which its clients match); a version refused
    // above has said what is wrong with it already.
    if (breaking.length && !versionRefused) out.push(breakingChangeRemedy(prev.version, next.version, now));
  }
  return out;
}

/**
 * The breaking changes of `next` over `previous` that its version does not allow, in DataHub's words
 * (which its clients match): a value type changed, cardinality from MULTIPLE to SINGLE, allowed
 * values restricted. Empty when there are none, or the version allows them.
 */
export function breakingChanges(previous: PropertyDefinition, next: PropertyDefinition): string[] {
  if (allowedByVersion(previous, next)) return [];
  const breaking: string[] = [];
  if (previous.valueType !== next.valueType) breaking.push('Value type cannot be changed as this is a backwards incompatible change');
  if (cardinalityOf(previous) === 'MULTIPLE' && cardinalityOf(next) === 'SINGLE') breaking.push('Property definition cardinality cannot be changed from MULTI to SINGLE');
  if (next.allowedValues) {
    if (!previous.allowedValues) breaking.push('Cannot restrict values that were previously allowed');
    else {
      for (const old of previous.allowedValues) {
        if (!next.allowedValues.some((n) => sameValue(n.value, old.value))) breaking.push('Cannot restrict values that were previously allowed');
      }
    }
  }
  return breaking;
}

/**
 * What a refused breaking change needs: a version greater than the current one, named, with one
 * that would do.
 *
 *   breakingChangeRemedy('20240614080000', undefined, now)
 *   // 'A breaking change needs a version greater than the current one, 20240614080000: give the time of the change as yyyyMMddHHmmss, e.g. 20261128185550'
 */
export function breakingChangeRemedy(current: string | undefined, given: string | undefined, now: number): string {
  const needed = current === undefined ? 'a version' : `a version greater than the current one, ${current}${given === undefined ? '' : ` (${given} is not)`}`;
  return `A breaking change needs ${needed}: give the time of the change as yyyyMMddHHmmss, e.g. ${suggestedVersion(current, now)}`;
}
