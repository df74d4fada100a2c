import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from './config.ts';
import { loadKubeConfig } from './kubeConfig.ts';

test('no kubeconfig anywhere is a configuration error naming where one is looked for', () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-nohome-'));
  const saved = process.env.HOME;
  process.env.HOME = home;
  try {
    assert.throws(() => loadKubeConfig({}), (err: unknown) => err instanceof ConfigError && /set KUBECONFIG, write ~\/\.kube\/config, or run in a cluster/.test(err.message));
  } finally {
    process.env.HOME = saved;
    rmSync(home, { recursive: true, force: true });
  }
});
