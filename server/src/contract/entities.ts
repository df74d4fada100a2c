/**
 * The entity registry: DataHub's entity types (datahubModel.ts), each with how its URN maps to its key
 * aspect and the aspects it may carry, which of them are time series, and the few aspects svc adds.
 * Everything else (validation, the OpenAPI document, bootstrapped entityType entities, GraphQL's entity
 * types: server/src/registry/) is derived from this list, and a client reads it to know what a URN
 * names (the CLI checks a file's URNs before it writes anything).
 */
import { DATAHUB_MODEL, type ModelKeyField } from './datahubModel.ts';
import { SvcError } from './errors.ts';
import { parseUrn, type Urn } from './urn.ts';

/** One field of a key aspect, filled from one part of the URN id. */
export type KeyField = ModelKeyField;

export interface EntitySpec {
  /** Canonical name as in URNs and paths, e.g. `dataset`, `schemaField`, `corpuser`. */
  name: string;
  keyAspect: string;
  /** Key fields in URN order; one field means a plain id, several mean a tuple id. */
  keyFields: KeyField[];
  aspects: string[];
}

/**
 * Aspects svc has served on entity types whose DataHub registry lacks them (a soft delete of a domain,
 * a platform or an ingestion run's records; structured property values on a tag): kept, so that what
 * was written before stays readable and writable.
 */
const SVC_ASPECTS: Record<string, string[]> = {
  domain: ['status'],
  tag: ['structuredProperties'],
  dataPlatform: ['status'],
  dataHubIngestionSource: ['status'],
  dataHubExecutionRequest: ['status'],
};

export const ENTITIES: EntitySpec[] = DATAHUB_MODEL.entities.map((e) => ({
  name: e.name,
  keyAspect: e.keyAspect,
  keyFields: e.keyFields,
  aspects: [...e.aspects, ...(SVC_ASPECTS[e.name] ?? []).filter((a) => !e.aspects.includes(a))],
}));

/** The time series aspects: their entries are kept apart from an entity's versioned aspects, and truncated. */
export const TIMESERIES_ASPECTS: ReadonlySet<string> = new Set(Object.entries(DATAHUB_MODEL.aspects).filter(([, a]) => a.timeseries === true).map(([name]) => name));

const BY_LOWER = new Map(ENTITIES.map((e) => [e.name.toLowerCase(), e]));

/** The entity type of a name in any case (`DataSet` is `dataset`), as DataHub reads one on input; undefined for an unknown one. */
export const findEntityType = (name: string): EntitySpec | undefined => BY_LOWER.get(name.toLowerCase());

/** A URN parsed and matched with its entity type. */
export interface EntityUrn extends Urn {
  urn: string;
  spec: EntitySpec;
}

/**
 * Parses a URN and finds its entity type; an unparsable URN, an unknown type (or one written in
 * another case), a tuple of the wrong shape for the type, or a part that is not what its key field
 * takes is INVALID_URN (`Invalid urn!: <urn>`).
 */
export function entityUrn(raw: string): EntityUrn {
  const parsed = parseUrn(raw);
  const spec = BY_LOWER.get(parsed.entityType.toLowerCase());
  if (!spec || spec.name !== parsed.entityType) throw SvcError.invalidUrn(raw, new Error('unknown entity type'));
  if (spec.keyFields.length > 1 && parsed.parts.length !== spec.keyFields.length) {
    throw SvcError.invalidUrn(raw, new Error(`expected ${spec.keyFields.length} tuple parts`));
  }
  if (spec.keyFields.length === 1 && parsed.parts.length !== 1) {
    // A single-field key keeps a parenthesised id whole, e.g. urn:li:tag:(a,b) has name "(a,b)".
    parsed.parts = [parsed.id];
  }
  // Each part as DataHub checks the key aspect built from it: a URN where the field is one (of its
  // type where it has one), one of the symbols of an enum.
  spec.keyFields.forEach((f, i) => {
    const part = parsed.parts[i]!;
    if (f.urnOf || f.urn) {
      let inner: Urn;
      try {
        inner = parseUrn(part);
      } catch (err) {
        throw SvcError.invalidUrn(raw, new Error(`${f.name} must be a urn`, { cause: err }));
      }
      if (f.urnOf && inner.entityType !== f.urnOf) throw SvcError.invalidUrn(raw, new Error(`${f.name} must be a ${f.urnOf} urn`));
    }
    if (f.symbols && !f.symbols.includes(part)) throw SvcError.invalidUrn(raw, new Error(`${f.name} must be one of ${f.symbols.join(', ')}`));
  });
  return { entityType: parsed.entityType, id: parsed.id, parts: parsed.parts, urn: raw, spec };
}
