#!/usr/bin/env node
/**
 * Builds what svc runs: server/src and operator/src compiled by tsc into dist/ (tsconfig.build.json:
 * `dist/server/src/main.js` is `server/src/main.ts`), with the files they read at run time (SQL, the
 * GraphQL schema) copied beside them. dist/ is emptied first, so that a file removed from the sources (a
 * migration above all) is gone from dist/ too.
 *
 *   node bin/build.mjs              `npm run build`; `prepare`, which `npm ci` and `npm install` run
 *   node bin/build.mjs --if-stale   only when a source changed since the last build (`npm start` and `npm test` run it)
 *
 * Without TypeScript (a devDependency: `npm ci --omit=dev`) an existing dist/ is kept as it is, and
 * without one the build fails saying how to make it.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');
/** Written last: a build that stopped half-way leaves no stamp, and the next one starts over. */
const STAMP = join(DIST, '.built');
const LOCK = join(ROOT, 'dist.lock');
const SOURCES = ['server/src', 'operator/src'];
/** What else decides what tsc emits. */
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

/** Every file and folder under the sources (folders too: removing a file changes its folder's mtime). */
function* walk(dir) {
  yield dir;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

function stale() {
  if (!existsSync(STAMP)) return 'no build yet';
  const built = statSync(STAMP).mtimeMs;
  for (const path of [...SOURCES.flatMap((s) => [...walk(join(ROOT, s))]), ...INPUTS.map((f) => join(ROOT, f))]) {
    // Unit tests beside the code are not built (tsconfig.build.json): editing one needs no build.
    if (path.endsWith('.test.ts')) continue;
    if (existsSync(path) && statSync(path).mtimeMs > built) return `${relative(ROOT, path)} changed`;
  }
  return undefined;
}

function tscPath() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/**
 * One build at a time in a tree (test files run in parallel each make sure of a fresh build): the others
 * wait, then find it fresh. A lock left by a build that was killed is taken over.
 */
function lock() {
  for (;;) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    try {
      // Throws when the holder is gone (an empty file is one being written: its holder is there).
      const holder = Number(readFileSync(LOCK, 'utf8'));
      if (holder) process.kill(holder, 0);
    } catch (err) {
      if (err.code !== 'EPERM') rmSync(LOCK, { force: true });
      continue;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
}

const ifStale = process.argv.includes('--if-stale');
if (ifStale && !stale()) process.exit(0);
lock();
process.on('exit', () => rmSync(LOCK, { force: true }));
const why = ifStale ? stale() : 'asked';
if (!why) process.exit(0);
const tsc = tscPath();
if (!tsc) {
  if (existsSync(STAMP)) {
    if (ifStale) process.stderr.write(`svc: ${why} since dist/ was built, but TypeScript is not installed (npm ci --omit=dev): running dist/ as it is\n`);
    process.exit(0);
  }
  process.stderr.write('svc: dist/ is not built and TypeScript is not installed (npm ci --omit=dev leaves it out): build with `npm ci` (then `npm prune --omit=dev` to drop the dev dependencies)\n');
  process.exit(1);
}
if (ifStale) process.stderr.write(`svc: building dist/ (${why})\n`);

rmSync(DIST, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
if (compiled.status !== 0) {
  process.stderr.write('svc: the build failed (tsc, above)\n');
  process.exit(compiled.status ?? 1);
}
for (const source of SOURCES) {
  for (const path of walk(join(ROOT, source))) {
    if (path.endsWith('.ts') || statSync(path).isDirectory()) continue;
    const target = join(DIST, relative(ROOT, path));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(path, target);
  }
}
writeFileSync(STAMP, `${new Date().toISOString()}\n`);
