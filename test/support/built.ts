/**
 * What users run is compiled JavaScript (`dist/`, built by `npm ci`, see bin/build.mjs): the tests that
 * run `npm start`, the operator's or system update's process run it too. `builtEntry` makes sure the build
 * is that of the sources under test (rebuilt when a source changed since; `npm test` has built it
 * already) and names the entry.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
let checked = false;

/** The compiled entry of a source, e.g. `server/src/main.ts` → `<root>/dist/server/src/main.js`. */
export function builtEntry(source: string): string {
  if (!checked) {
    const build = spawnSync(process.execPath, [join(ROOT, 'bin/build.mjs'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (build.status !== 0) throw new Error(`the build failed (node bin/build.mjs: exit ${build.status})`);
    checked = true;
  }
  return join(ROOT, 'dist', source.replace(/\.ts$/, '.js'));
}
