/**
 * Status conditions in the metav1.Condition shape. `lastTransitionTime` moves only when a condition's
 * status flips, as Kubernetes API conventions ask; reason, message and observedGeneration follow
 * every update.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** The wanted state of one condition; the time is filled in by {@link setCondition}. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

/**
 * The conditions with `update` applied: a new condition gets `now`; an existing one keeps its
 * `lastTransitionTime` unless its status changed. Other conditions are kept as they are.
 */
export function setCondition(conditions: readonly Condition[] | undefined, update: ConditionUpdate, now = new Date()): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === update.type);
  const previous = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    ...update,
    // The CRD requires a reason and a message of at least one character, and caps the message.
    reason: update.reason || 'Unknown',
    message: (update.message || update.reason || '-').slice(0, 32_768),
    lastTransitionTime: previous && previous.status === update.status ? previous.lastTransitionTime : now.toISOString(),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** The condition of a type, if present. */
export const findCondition = (conditions: readonly Condition[] | undefined, type: string) => conditions?.find((c) => c.type === type);
