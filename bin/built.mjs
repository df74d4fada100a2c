// Runs an entry of dist/ (what bin/build.mjs compiles), or says how to build it when the install did not.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Imports `entry` (a path from the package root, e.g. `dist/server/src/cli/main.js`). */
export async function runBuilt(entry) {
  const path = join(import.meta.dirname, '..', entry);
  if (!existsSync(path)) {
    process.stderr.write(`svc is not built (${entry} is missing): run \`npm run build\` in ${join(import.meta.dirname, '..')}\n`);
    process.exit(1);
  }
  await import(pathToFileURL(path).href);
}
