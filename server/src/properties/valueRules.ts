/**
 * The rules a `structuredProperties` write must pass: DataHub's (its StructuredPropertiesValidator and
 * the immutability rule, in its order and with its messages, which clients match), plus svc's: the
 * entity's type must be one the property applies to, and an assignment carries at least one value.
 */
import { dateTimeProblem } from '../shared/dates.ts';
import { SvcError, type Reason } from '../shared/errors.ts';
import { parseUrn } from '../contract/urn.ts';
import { cardinalityOf, logicalType, numericString, printValue, printValues, sameValue, type Assignment, type PrimitiveValue, type PropertyDefinition } from './types.ts';

/** What the rules need to know about one referenced property. */
export interface PropertyState {
  definition: PropertyDefinition;
  softDeleted: boolean;
}

export interface Violation {
  message: string;
  /** A missing property is a failed precondition (412), not an invalid payload (400). */
  precondition?: boolean;
  /** What kind of refusal it makes, where a client may act on it (a soft-deleted property's value). */
  reason?: Reason;
}

const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;

/** DataHub's date check: 10 characters, `yyyy-[m]m-[d]d`, a day of the calendar (dates.ts). */
function isDate(s: string): boolean {
  if (s.length !== 10) return false;
  const m = DATE.exec(s);
  return m !== null && dateTimeProblem({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) }) === undefined;
}

/**
 * The type check of one value against a value type: numbers (or numeric strings) for `number`,
 * strings for `string` and `rich_text`, `YYYY-MM-DD` for `date`, a URN (of one of `allowedTypes`,
 * when given) for `urn`. `subject` starts the message (`Property: <urn>`). Returns the message, or
 * undefined when the value fits.
 */
export function checkValueType(subject: string, valueType: string, value: PrimitiveValue, allowedTypes: string[] | undefined): string | undefined {
  const v = printValue(value);
  switch (logicalType(valueType)) {
    case 'number':
      if ('double' in value) return undefined;
      return numericString(value.string) !== undefined ? undefined : `${subject}, value: ${v} should be a number`;
    case 'string':
    case 'rich_text':
      return 'string' in value ? undefined : `${subject}, value: ${v} should be a string`;
    case 'date':
      if (!('string' in value)) return `${subject}, value: ${v} should be a string`;
      return isDate(value.string) ? undefined : `${subject}, value: ${v} should be a date with format YYYY-MM-DD`;
    case 'urn': {
      if (!('string' in value)) return `${subject}, value: ${v} should be a string`;
      let entityType: string;
      try {
        entityType = parseUrn(value.string).entityType;
      } catch (err) {
        // A URN too long to address is told so, not called no URN.
        return tooLong(err) ? `${subject}, value: ${(err as SvcError).message}` : `${subject}, value: ${v} should be an urn`;
      }
      if (allowedTypes && allowedTypes.length > 0) {
        const ids = allowedTypes.map((t) => parseUrn(t).id.replace(/^svc\./, '').toLowerCase());
        if (!ids.includes(entityType.toLowerCase())) return `${subject}, value: ${v} is not of any supported urn types:[${allowedTypes.join(', ')}]`;
      }
      return undefined;
    }
    default:
      return `Validation support for type ${valueType} is not yet implemented.`;
  }
}

function printAssignment(a: Assignment): string {
  return `{values=${printValues(a.values)}, propertyUrn=${a.propertyUrn}}`;
}

/**
 * DataHub's duplicate check: one violation per property that more than one of `assignments` names,
 * `Property: <urn> has multiple entries: [<assignments>]`, in the order the properties first appear.
 * One pass, grouped by property (comparing each assignment with all others took seconds for 10,000).
 */
export function duplicateEntries(assignments: Assignment[]): Violation[] {
  const byProperty = new Map<string, Assignment[]>();
  for (const a of assignments) {
    const same = byProperty.get(a.propertyUrn);
    if (same) same.push(a);
    else byProperty.set(a.propertyUrn, [a]);
  }
  return [...byProperty.values()]
    .filter((same) => same.length > 1)
    .map((same) => ({ message: `Property: ${same[0]!.propertyUrn} has multiple entries: [${same.map(printAssignment).join(', ')}]` }));
}

/** Whether parsing a URN failed for its length alone (parseUrn's VALIDATION; a malformed one is INVALID_URN). */
const tooLong = (err: unknown): boolean => err instanceof SvcError && err.code === 'VALIDATION';

/**
 * DataHub's check that a property URN names a structured property: the violation, or undefined when
 * it does (`urn:li:tag:x` → `Unexpected entity type. Expected: structuredProperty Found: tag`; a
 * string that is no URN is reported as its own type).
 */
export function propertyUrnProblem(propertyUrn: string): Violation | undefined {
  let type: string;
  try {
    type = parseUrn(propertyUrn).entityType;
  } catch (err) {
    if (tooLong(err)) return { message: (err as SvcError).message };
    type = propertyUrn;
  }
  return type === 'structuredProperty' ? undefined : { message: `Unexpected entity type. Expected: structuredProperty Found: ${type}` };
}

/**
 * Checks the assignments of a `structuredProperties` write.
 * - `next`: the assignments to check (those new or changed by this write);
 * - `all`: every assignment of the resulting aspect (for the duplicate check);
 * - `properties`: the state of each referenced property that exists;
 * - `entityTypeUrn`: the entity's type as an entityType URN (`urn:li:entityType:svc.dataset`).
 */
export function checkAssignments(
  next: Assignment[],
  all: Assignment[],
  properties: ReadonlyMap<string, PropertyState>,
  entityTypeUrn: string,
): Violation[] {
  const out = duplicateEntries(all);
  const named = new Set<string>();
  const duplicated = new Set<string>();
  for (const a of all) (named.has(a.propertyUrn) ? duplicated : named).add(a.propertyUrn);
  for (const a of next) {
    if (duplicated.has(a.propertyUrn)) continue;
    const wrongType = propertyUrnProblem(a.propertyUrn);
    if (wrongType) {
      out.push(wrongType);
      continue;
    }
    const state = properties.get(a.propertyUrn);
    if (!state) {
      // DataHub's words last: its clients match them.
      out.push({
        message: `Structured property ${a.propertyUrn} does not exist: create its definition first (Unexpected null value found for ${a.propertyUrn} Structured Property Definition.)`,
        precondition: true,
      });
      continue;
    }
    if (state.softDeleted) {
      out.push({ message: 'Cannot apply a soft deleted Structured Property value', reason: 'SoftDeleted' });
      continue;
    }
    const def = state.definition;
    if (!def.entityTypes.includes(entityTypeUrn)) {
      out.push({ message: `Property: ${a.propertyUrn} cannot be applied to entity type ${entityTypeUrn}; it applies to [${def.entityTypes.join(', ')}]` });
    }
    if (a.values.length === 0) out.push({ message: `Property: ${a.propertyUrn} has no values; give at least one` });
    if (cardinalityOf(def) === 'SINGLE' && a.values.length > 1) {
      out.push({ message: `Property: ${a.propertyUrn} has cardinality 1, but multiple values were assigned: ${printValues(a.values)}` });
    }
    for (const v of a.values) {
      const typeProblem = checkValueType(`Property: ${a.propertyUrn}`, def.valueType, v, def.typeQualifier?.allowedTypes);
      if (typeProblem) {
        out.push({ message: typeProblem });
        continue;
      }
      if (def.allowedValues && !def.allowedValues.some((allowed) => sameValue(allowed.value, v))) {
        out.push({ message: `Property: ${a.propertyUrn}, value: ${printValue(v)} should be one of ${printValues(def.allowedValues.map((x) => x.value))}` });
      }
    }
  }
  return out;
}

/**
 * Immutable properties: once an entity has a value of an immutable property, a write may neither
 * change it nor drop it. Applies only when the entity already had the aspect.
 */
export function checkImmutable(previous: Assignment[] | undefined, next: Assignment[], properties: ReadonlyMap<string, PropertyState>): Violation[] {
  if (!previous) return [];
  const out: Violation[] = [];
  for (const old of previous) {
    if (properties.get(old.propertyUrn)?.definition.immutable !== true) continue;
    const now = next.find((a) => a.propertyUrn === old.propertyUrn);
    if (!now) out.push({ message: `Cannot delete an immutable property ${old.propertyUrn}` });
    else if (now.values.length !== old.values.length || now.values.some((v, i) => !sameValue(v, old.values[i]!))) {
      out.push({ message: `Cannot mutate an immutable property: ${old.propertyUrn}` });
    }
  }
  return out;
}
