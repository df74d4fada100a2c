/**
 * Helm for tests: the binary provision.sh built, with its cache, config and data folders in a fresh
 * temporary folder so no test reads or writes the machine's Helm settings. Nothing runs, so stopping
 * only removes that folder.
 *
 * Needs `SVC_HELM` (printed by `test/infra/provision.sh helm`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Component, requiredEnv } from './component.ts';

/** Env: `HELM_BIN`, plus `HELM_CACHE_HOME`, `HELM_CONFIG_HOME` and `HELM_DATA_HOME` in a temporary folder. */
export async function helmComponent(): Promise<Component> {
  const bin = requiredEnv('SVC_HELM');
  const root = mkdtempSync(join(process.env.SVC_TEST_TMP ?? tmpdir(), 'svc-helm-'));
  const env = {
    HELM_BIN: bin,
    HELM_CACHE_HOME: join(root, 'cache'),
    HELM_CONFIG_HOME: join(root, 'config'),
    HELM_DATA_HOME: join(root, 'data'),
  };
  for (const dir of [env.HELM_CACHE_HOME, env.HELM_CONFIG_HOME, env.HELM_DATA_HOME])
    mkdirSync(dir, { recursive: true });
  try {
    execFileSync(bin, ['version', '--short'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`${bin} does not run`, { cause: err });
  }
  return {
    name: 'helm',
    env,
    stop: async () => rmSync(root, { recursive: true, force: true }),
  };
}
