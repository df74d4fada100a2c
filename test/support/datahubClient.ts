/**
 * DataHub's own clients (`acryl-datahub` from PyPI, each pinned version provision.sh installs, listed in
 * SVC_DATAHUB_BINS) run against a test server as a user would: the `datahub` CLI or Python with the SDK,
 * unchanged but for the server URL and token, in a home directory of their own. Their calls to PyPI and
 * GitHub (the upgrade check) go to a proxy that refuses them, so the tests stay off the internet.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, type TestServer } from './testServer.ts';

/** The scripts and files the compatibility tests give the clients. */
export const FIXTURES = join(import.meta.dirname, '../compat/fixtures');

/** One installed client: its virtualenv's `bin` folder and its version. */
export interface DatahubBin {
  bin: string;
  version: string;
}

/** Every client version to test against (SVC_DATAHUB_BINS, set by `npm test`). */
export function datahubClientVersions(): DatahubBin[] {
  const bins = (process.env.SVC_DATAHUB_BINS ?? '').split(' ').filter(Boolean);
  if (bins.length === 0) throw new Error('SVC_DATAHUB_BINS is not set: run through `npm test`, which provisions the DataHub clients');
  return bins.map((bin) => ({ bin, version: /datahub-([^/]+)\/bin$/.exec(bin)?.[1] ?? bin }));
}

export interface ClientRun {
  code: number;
  /** stdout, then stderr. */
  out: string;
}

/** Runs the client's programs against `server` with the admin token, from a home directory of its own (`dir`). */
export function datahubClient({ bin }: DatahubBin, server: TestServer, token = ADMIN_TOKEN) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-datahub-'));
  const run = (program: string, args: string[], timeout = 300_000) =>
    new Promise<ClientRun>((done) => {
      const env = {
        PATH: `${bin}:${process.env.PATH}`,
        HOME: dir,
        DATAHUB_GMS_URL: server.url,
        DATAHUB_GMS_TOKEN: token,
        DATAHUB_TELEMETRY_ENABLED: 'false',
        // The upgrade check's calls to PyPI and GitHub are refused at once; svc is reached directly.
        HTTP_PROXY: 'http://127.0.0.1:9',
        HTTPS_PROXY: 'http://127.0.0.1:9',
        NO_PROXY: '127.0.0.1,localhost',
      };
      execFile(join(bin, program), args, { env, cwd: dir, timeout, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
      );
    });
  return {
    dir,
    datahub: (args: string[]) => run('datahub', args),
    python: (args: string[]) => run('python', args),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
