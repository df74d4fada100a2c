// Temporary driver: start components, run a test file with their env, stop them.
import { spawnSync } from 'node:child_process';
import type { Component } from '../harness/component.ts';
const which = process.argv[2]!; const files = process.argv.slice(3);
const starters: Record<string, () => Promise<Component>> = {
  opensearch: async () => (await import('../harness/opensearch.ts')).startOpenSearch(),
  kube: async () => (await import('../harness/kube.ts')).startKube(),
  helm: async () => (await import('../harness/helm.ts')).helmComponent(),
};
const comps: Component[] = [];
let rc = 1;
try {
  for (const w of which.split(',')) { const t0 = Date.now(); const c = await starters[w]!(); comps.push(c); console.error(`${w} started in ${Date.now()-t0} ms`, c.env); }
  const env = { ...process.env, ...Object.assign({}, ...comps.map((c) => c.env)) };
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...files], { stdio: 'inherit', env });
  console.error(`tests took ${Date.now()-t0} ms`);
  rc = r.status ?? 1;
} finally {
  for (const c of comps.reverse()) { const t0 = Date.now(); await c.stop(); console.error(`${c.name} stopped in ${Date.now()-t0} ms`); }
}
process.exit(rc);
