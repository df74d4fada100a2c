import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { REFERRING_ASPECTS } from './references.ts';
import { LINEAGE_ASPECTS } from '../lineage/lineage.ts';

test('the aspects the index of mentioned URNs covers (R__svc_mentions.sql) are those references and lineage look up', () => {
  const sql = readFileSync(new URL('../db/migrations/R__svc_mentions.sql', import.meta.url), 'utf8');
  const listed = /'\{([^}]*)\}'::text\[\]/.exec(sql)![1]!.split(',').map((a) => a.trim()).sort();
  assert.deepEqual(listed, [...new Set([...REFERRING_ASPECTS, ...LINEAGE_ASPECTS.keys()])].sort());
});
