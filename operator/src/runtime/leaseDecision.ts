/**
 * What a replica contending for a Lease decides, apart from reading and writing it (leaderElection.ts
 * does the I/O and the timers): whether its timings are sound, when a Lease it saw counts as expired,
 * and what record it writes to take or renew one. Times are this replica's monotonic milliseconds
 * (`performance.now()`); a record's own timestamps are written for others to read, never trusted here,
 * as the clocks of two machines need not agree (client-go's `tools/leaderelection` decides the same way).
 */

/** client-go's `JitterFactor`: a replica trying to acquire waits a retry period times 1 to 2.2 between attempts. */
export const JITTER_FACTOR = 1.2;

/** The Lease's spec as the elector reads and writes it: client-go's `LeaderElectionRecord`. */
export interface LeaseRecord<Time = Date> {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: Time | undefined;
  renewTime: Time | undefined;
  leaseTransitions: number;
}

/** A record as this replica last saw it change, and when (monotonic ms): the start of its expiry count. */
export interface Observation<Time = Date> {
  record: LeaseRecord<Time>;
  at: number;
  /** The record as read, serialised, to tell a changed record from the same one read again. */
  raw: string;
}

/** The timings of an elector, in the units it works in. */
export interface LeaseTimings {
  /** The duration written in the Lease, whole seconds. */
  leaseSeconds: number;
  renewDeadlineMs: number;
  retryMs: number;
}

/**
 * The timings given in seconds (client-go's defaults 15 / 10 / 2), or the violations that make them
 * unsound: a leader must give up (renew deadline) before another replica may take over (lease
 * duration), and must get several tries (retry period, with jitter) within its deadline.
 */
export function leaseTimings(lease = 15, renewDeadline = 10, retry = 2): LeaseTimings | { violations: string[] } {
  const violations: string[] = [];
  if (!(retry > 0)) violations.push(`retryPeriodSeconds must be greater than 0, got ${retry}`);
  if (!(renewDeadline > JITTER_FACTOR * retry)) violations.push(`renewDeadlineSeconds (${renewDeadline}) must be greater than ${JITTER_FACTOR} × retryPeriodSeconds (${retry})`);
  if (!(lease > renewDeadline)) violations.push(`leaseDurationSeconds (${lease}) must be greater than renewDeadlineSeconds (${renewDeadline})`);
  if (violations.length > 0) return { violations };
  return { leaseSeconds: Math.ceil(lease), renewDeadlineMs: renewDeadline * 1000, retryMs: retry * 1000 };
}

/** The observation after reading `record` (serialised as `raw`) at `now`: a new one if the record changed, else the one before. */
export function observe<Time>(before: Observation<Time> | undefined, record: LeaseRecord<Time>, raw: string, now: number): Observation<Time> {
  return before !== undefined && before.raw === raw ? before : { record, at: now, raw };
}

/** client-go's `isLeaseValid`: the record seen is younger than its lease duration, by this replica's clock. */
export function observedValid(observed: Observation<unknown> | undefined, now: number): boolean {
  return observed !== undefined && now < observed.at + observed.record.leaseDurationSeconds * 1000;
}

/**
 * What a replica writes after reading the Lease's `current` record: nothing (undefined) while another
 * replica holds it and it has not expired by this replica's clock; else the record that renews it (held
 * by this replica: acquire time and transitions kept) or takes it (free or expired: one more transition).
 */
export function nextRecord<Time>(current: LeaseRecord<Time>, observed: Observation<Time> | undefined, identity: string, leaseSeconds: number, now: number, time: Time): LeaseRecord<Time> | undefined {
  const holder = current.holderIdentity;
  if (holder !== '' && holder !== identity && observedValid(observed, now)) return undefined;
  const mine = { holderIdentity: identity, leaseDurationSeconds: leaseSeconds, renewTime: time };
  return holder === identity
    ? { ...mine, acquireTime: current.acquireTime, leaseTransitions: current.leaseTransitions }
    : { ...mine, acquireTime: time, leaseTransitions: current.leaseTransitions + 1 };
}

/** The record a leader renews with without reading the Lease first (its last observation still valid): the held one, renewed. */
export function renewal<Time>(held: LeaseRecord<Time>, identity: string, leaseSeconds: number, time: Time): LeaseRecord<Time> {
  return { holderIdentity: identity, leaseDurationSeconds: leaseSeconds, acquireTime: held.acquireTime, renewTime: time, leaseTransitions: held.leaseTransitions };
}

/** The record that gives the Lease up (client-go's `ReleaseOnCancel`): no holder, a duration of 1 s, transitions kept. */
export function released<Time>(current: LeaseRecord<Time>, time: Time): LeaseRecord<Time> {
  return { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time, leaseTransitions: current.leaseTransitions };
}

/** The record of a Lease created by this replica. */
export function created<Time>(identity: string, leaseSeconds: number, time: Time): LeaseRecord<Time> {
  return { holderIdentity: identity, leaseDurationSeconds: leaseSeconds, acquireTime: time, renewTime: time, leaseTransitions: 0 };
}
