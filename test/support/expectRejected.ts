/**
 * Assertions for requests that svc must refuse without changing anything: the database fingerprint
 * is taken before and after the request and must be the same.
 */
import assert from 'node:assert/strict';
import { isReason } from '../../server/src/contract/errors.ts';
import { fingerprint } from './fingerprint.ts';
import type { TestServer } from './testServer.ts';

/**
 * Sends a request that must be refused with `status`, runs `check` on the raw body, and asserts the
 * database of `s` did not change.
 */
export async function expectRejected(
  s: TestServer,
  req: () => Promise<Response>,
  status: number,
  check: (body: string, res: Response) => void,
): Promise<void> {
  const before = await fingerprint(s.databaseUrl);
  const res = await req();
  const body = await res.text();
  assert.equal(res.status, status, body);
  check(body, res);
  assert.equal(await fingerprint(s.databaseUrl), before, 'the database changed');
}

/**
 * Sends a request that must be refused with `status` and a body of exactly
 * {"error":"Validation Error","message"} ({"error":"Precondition Failed",…} for a 412), and svc's
 * `reason` when the refusal has one (one of the contract's), the message containing every one of
 * `expected`; asserts the database did not change. Returns the message.
 *
 *   await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [] }]), 400, `Property: ${p} has no values`);
 */
export async function expectValidationError(s: TestServer, req: () => Promise<Response>, status: number, ...expected: string[]): Promise<string> {
  let message = '';
  await expectRejected(s, req, status, (raw) => {
    const body = JSON.parse(raw) as { error: string; message: string; reason?: string };
    assert.deepEqual(Object.keys(body).filter((k) => k !== 'reason').sort(), ['error', 'message'], raw);
    if ('reason' in body) assert.ok(isReason(body.reason), raw);
    assert.equal(body.error, status === 412 ? 'Precondition Failed' : 'Validation Error');
    for (const e of expected) assert.ok(body.message.includes(e), `expected "${e}" in: ${body.message}`);
    message = body.message;
  });
  return message;
}
