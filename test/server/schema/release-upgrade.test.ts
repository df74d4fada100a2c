/**
 * Every release upgrades the one before it: the schema of the newest release (the newest git tag
 * vX.Y.Z, other than this commit itself), built from that tag's schema files, then upgraded with this
 * version's, is the schema a new database gets. Numbered migrations are append-only from the first
 * release (server/src/db/migrate.ts); before it, there is no numbered migration but the baseline.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { MIGRATIONS_DIR, migrate, schemaFiles } from '../../../server/src/db/migrate.ts';
import { describeSchema, schemaScratch } from '../../support/schemaDescription.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const SCHEMA_PATH = relative(ROOT, MIGRATIONS_DIR);

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The newest release tag (vX.Y.Z by version) that is not this commit itself, if any. */
function previousRelease(): string | undefined {
  const head = git('rev-parse', 'HEAD');
  const version = (tag: string) => tag.slice(1).split('.').map(Number);
  return git('tag', '--list', 'v*')
    .split('\n')
    .filter((t) => /^v\d+\.\d+\.\d+$/.test(t) && git('rev-list', '-n', '1', t) !== head)
    .sort((a, b) => {
      const [x, y] = [version(a), version(b)];
      return y[0]! - x[0]! || y[1]! - x[1]! || y[2]! - x[2]!;
    })[0];
}

/** The tag's schema files, written to a directory of their own. */
function schemaAt(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), `svc-schema-${tag}-`));
  folder(dir);
  const paths = git('ls-tree', '--name-only', tag, '--', `${SCHEMA_PATH}/`).split('\n').filter(Boolean);
  assert.ok(paths.length > 0, `${tag} holds no schema files under ${SCHEMA_PATH}`);
  for (const path of paths) writeFileSync(join(dir, basename(path)), execFileSync('git', ['show', `${tag}:${path}`], { cwd: ROOT }));
  return dir;
}

const { database, folder } = schemaScratch(2);

test('the schema of the previous release upgrades to the schema a new database gets', async () => {
  const release = previousRelease();
  const numbered = schemaFiles().numbered.map((f) => f.name);
  if (release === undefined) {
    // Nothing is released, so no user's database needs an upgrade: the tables are one baseline,
    // edited in place until the first release is tagged.
    assert.deepEqual(
      numbered,
      ['V001__baseline.sql'],
      'no release tag vX.Y.Z was found (in a clone without tags: git fetch --tags), so the tables are the baseline alone',
    );
    return;
  }
  const released = schemaAt(release);
  const old = await database();
  await migrate(old.pool, { dir: released });
  // The release's numbered migrations are this version's first ones, unchanged (migrate refuses a
  // changed one), and the upgrade applies the rest.
  const upgraded = await migrate(old.pool);
  const releasedNumbered = schemaFiles(released).numbered.map((f) => f.name);
  assert.deepEqual(numbered.slice(0, releasedNumbered.length), releasedNumbered, `the numbered migrations of ${release} are this version's first ones`);
  assert.deepEqual(
    upgraded.filter((n) => !n.startsWith('R__')),
    numbered.slice(releasedNumbered.length),
  );
  const fresh = await database();
  await migrate(fresh.pool);
  assert.deepEqual(await describeSchema(old.url), await describeSchema(fresh.url), `the schema of ${release}, upgraded, is the schema of a new database`);
});
