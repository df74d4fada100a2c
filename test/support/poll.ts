/** Polling for eventually consistent state (search documents, background tasks) in tests. */
import assert from 'node:assert/strict';

/** Calls `fn` every 200 ms until `ok` holds for its value, which it returns; fails after `timeoutMs` with the last value. */
export async function pollUntil<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    assert.ok(Date.now() < deadline, `${what}: still ${JSON.stringify(v)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
