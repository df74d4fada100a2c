/**
 * Where the CLI finds its server: `SVC_GMS_URL` and `SVC_GMS_TOKEN` when set, else `~/.svcenv` as
 * `svc init` wrote it (a JSON object `{"gms": {"server", "token"}}`, readable by its owner only). The
 * file is read as YAML, of which JSON is a part, so that DataHub's `~/.datahubenv` (the same `gms`
 * mapping, written as YAML, with `token: ''` for none) works as it is.
 */
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CliError } from './errors.ts';
import { writeTextFile } from './files.ts';

export interface CliConfig {
  server: string;
  token: string | undefined;
}

/** The config file (`SVC_ENV_FILE` overrides the path, for tests and for several installations). */
export const configPath = () => process.env.SVC_ENV_FILE ?? join(homedir(), '.svcenv');

export function saveConfig(c: CliConfig): string {
  const path = configPath();
  writeTextFile(path, `${JSON.stringify({ gms: { server: c.server, token: c.token ?? null } }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** What the config file holds (nothing when there is none); a usage error when it cannot be read. */
export function savedConfig(): Partial<CliConfig> {
  const path = configPath();
  if (!existsSync(path)) return {};
  try {
    const parsed: unknown = parseYaml(readFileSync(path, 'utf8')) ?? {};
    if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('it holds no mapping');
    const { gms } = parsed as { gms?: { server?: unknown; token?: unknown } };
    const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    return { server: text(gms?.server), token: text(gms?.token) };
  } catch (err) {
    throw new CliError(`${path} is not a configuration svc can read (${(err as Error).message.split('\n')[0]}): run svc init again`, 2);
  }
}

/** The configuration in effect; a usage error saying how to make one when there is none. */
export function loadConfig(): CliConfig {
  const file = savedConfig();
  const server = process.env.SVC_GMS_URL || file.server;
  if (!server) throw new CliError(`No server configured: run svc init --host <url> --token <token>, or set SVC_GMS_URL and SVC_GMS_TOKEN`, 2);
  return { server: server.replace(/\/+$/, ''), token: process.env.SVC_GMS_TOKEN || file.token };
}
