/**
 * DataHub's Python client for the compatibility suite: the virtualenvs provision.sh made (one per pinned
 * `acryl-datahub` version), and a fresh HOME so that no run reads or writes the machine's `~/.datahubenv`.
 * Nothing runs; stopping removes that folder.
 *
 * Needs `SVC_DATAHUB_BINS` (printed by `test/infra/provision.sh datahub`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Component, requiredEnv } from './component.ts';

/** Env: `SVC_DATAHUB_BINS` (space-separated bin folders) and `SVC_DATAHUB_HOME` (a temporary HOME). */
export async function datahubComponent(): Promise<Component> {
  const bins = requiredEnv('SVC_DATAHUB_BINS');
  for (const bin of bins.split(' ')) {
    try {
      execFileSync(join(bin, 'datahub'), ['version'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DATAHUB_TELEMETRY_ENABLED: 'false' } });
    } catch (err) {
      throw new Error(`${bin}/datahub does not run`, { cause: err });
    }
  }
  const home = mkdtempSync(join(process.env.SVC_TEST_TMP ?? tmpdir(), 'svc-datahub-home-'));
  return {
    name: 'datahub client',
    env: { SVC_DATAHUB_BINS: bins, SVC_DATAHUB_HOME: home },
    stop: async () => rmSync(home, { recursive: true, force: true }),
  };
}
