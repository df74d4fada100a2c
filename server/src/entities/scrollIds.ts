/**
 * Scroll ids of listings: the position after which the next page starts, bound to the listing it came
 * from (entity type and order) and signed with the deployment's `scroll` secret (HMAC-SHA-256), so a
 * scroll id is only ever one svc issued for the same listing. `<payload>.<signature>`, base64url.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { query, type Db } from '../db/pool.ts';
import { SvcError } from '../shared/errors.ts';

/**
 * Reads the deployment's secret for scroll ids (made with the schema: db/migrations/V001__baseline.sql).
 */
export async function loadScrollSecret(db: Db): Promise<Buffer> {
  const [row] = await query<{ secret: Buffer }>(db, "SELECT secret FROM svc_secrets WHERE name = 'scroll'", []);
  if (!row) throw new Error('the scroll secret is missing from svc_secrets');
  return row.secret;
}

export class ScrollIds {
  constructor(private readonly secret: Buffer) {}

  private sign(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest().subarray(0, 16);
  }

  /** A scroll id for the page after `after` of the listing `scope` (e.g. `dataset:ASCENDING`). */
  encode(scope: string, after: string): string {
    const payload = Buffer.from(JSON.stringify({ s: scope, a: after })).toString('base64url');
    return `${payload}.${this.sign(payload).toString('base64url')}`;
  }

  /** The position a scroll id of the listing `scope` names; VALIDATION when svc did not issue it for that listing. */
  decode(scope: string, scrollId: string): string {
    const [payload = '', signature = ''] = scrollId.split('.');
    const given = Buffer.from(signature, 'base64url');
    const expected = this.sign(payload);
    if (given.length === expected.length && timingSafeEqual(given, expected)) {
      const { s, a } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { s: string; a: string };
      if (s === scope) return a;
    }
    const shown = scrollId.length > 80 ? `${scrollId.slice(0, 80)}…` : scrollId;
    throw SvcError.validation([`scrollId: "${shown}" is not a scroll id this server returned for this listing (same entity type and sort order)`]);
  }
}
