/** Runs the `svc` binary as a user would, against a server, with no configuration file of its own. */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { builtEntry } from './built.ts';
import { ADMIN_TOKEN } from './testServer.ts';

// The binary runs the CLI as compiled into dist/: built first when a source changed since.
builtEntry('server/src/cli/main.ts');

/** The `svc` binary (as `npx svc` runs it). */
export const SVC_BIN = resolve(import.meta.dirname, '../../bin/svc.mjs');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `svc <args>` against the server at `url` with the admin token (SVC_GMS_URL, SVC_GMS_TOKEN, and an
 * SVC_ENV_FILE that does not exist unless `env` names one); `env` adds to or overrides that
 * environment, `cwd` is where it runs.
 */
export function runSvc(url: string, args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  return new Promise((done) => {
    execFile(process.execPath, [SVC_BIN, ...args], { env: { PATH: process.env.PATH, SVC_GMS_URL: url, SVC_GMS_TOKEN: ADMIN_TOKEN, SVC_ENV_FILE: '/nonexistent/svcenv', ...env }, cwd }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
