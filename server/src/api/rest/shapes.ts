/**
 * The two OpenAPI families' JSON shapes. v3: aspects beside `urn`, each `{"value": …}`; v2: aspects
 * nested under `"aspects"`. System metadata and audit stamps appear only when asked for.
 */
import type { EntityRecord, StoredAspect } from '../../entities/entityService.ts';

export type ApiVersion = 'v2' | 'v3';

/** `{"value": …}` plus `systemMetadata` and `auditStamp` when `systemMetadata=true`. */
export function aspectWrapper(a: StoredAspect, withSystemMetadata: boolean): Record<string, unknown> {
  if (!withSystemMetadata) return { value: a.value };
  return {
    value: a.value,
    systemMetadata: a.systemMetadata,
    auditStamp: { time: a.createdOn.getTime(), actor: a.createdBy },
  };
}

export function entityShape(v: ApiVersion, e: EntityRecord, withSystemMetadata: boolean): Record<string, unknown> {
  const aspects = Object.fromEntries([...e.aspects.values()].map((a) => [a.aspect, aspectWrapper(a, withSystemMetadata)]));
  return v === 'v3' ? { urn: e.urn, ...aspects } : { urn: e.urn, aspects };
}

/** Splits a batch item into its aspects: v3 `{urn, <aspect>: {value, systemMetadata?}}`, v2 `{urn, aspects: {…}}`. */
export function batchItemAspects(v: ApiVersion, item: Record<string, unknown>): [string, unknown][] {
  if (v === 'v2') {
    const aspects = item.aspects;
    return typeof aspects === 'object' && aspects !== null && !Array.isArray(aspects) ? Object.entries(aspects) : [];
  }
  return Object.entries(item).filter(([k]) => k !== 'urn');
}
