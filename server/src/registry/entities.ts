/**
 * The entity registry: DataHub's entity types (datahubModel.ts), each with how its URN maps to its key
 * aspect and the aspects it may carry, and the few aspects svc adds. Everything else (validation, the
 * OpenAPI document, bootstrapped entityType entities, GraphQL's entity types) is derived from this list.
 */
import { DATAHUB_MODEL, type ModelKeyField } from './datahubModel.ts';

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
