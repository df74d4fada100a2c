import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const SERVER = join(import.meta.dirname, '..');
/** Documents the code was written from, which are not in the repository: a rule is stated where it is used. */
const OUTSIDE = /DECISIONS\.md|datahub-behaviour|seed-interface/;

test('the server code cites no document outside the repository', () => {
  const citing = readdirSync(SERVER, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile() && /\.(ts|sql|json)$/.test(f.name))
    .map((f) => join(f.parentPath, f.name))
    .filter((path) => path !== import.meta.filename && OUTSIDE.test(readFileSync(path, 'utf8')));
  assert.deepEqual(citing, []);
});
