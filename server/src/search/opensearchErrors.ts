/**
 * OpenSearch not answering (the connection refused or cut, a request timed out): a 503 that says so,
 * for every call svc makes to it on a request's behalf (searches, time series reads and truncations).
 * Anything else OpenSearch answers is what it is.
 */
import { SvcError } from '../shared/errors.ts';

export async function reachingOpenSearch<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    const name = (err as { name?: string }).name ?? '';
    if (/Connection|Timeout|NoLivingConnections/.test(name)) throw new SvcError('UNAVAILABLE', 'The search backend (OpenSearch) is not reachable', { cause: err });
    throw err;
  }
}
