/** `svc init --host <url> --token <token>`: saves where the server is and the token to use (prompting for what is missing on a terminal). */
import { Command } from 'commander';
import { configPath, saveConfig, savedConfig } from '../config.ts';
import { CliError } from '../errors.ts';
import { command, printing } from '../output.ts';
import { ask, onTerminal } from '../prompt.ts';

/** The token of the config file, when it has one and can be read (init is how an unreadable one is replaced). */
function readableSavedToken(): string | undefined {
  try {
    return savedConfig().token;
  } catch {
    return undefined;
  }
}

export function initCommand(): Command {
  return command('init', 'Save the server address and access token (to ~/.svcenv; SVC_GMS_URL and SVC_GMS_TOKEN override it)', ['svc init --host http://localhost:8080 --token "$SVC_TOKEN"'])
    .option('--host <url>', 'server address, e.g. http://localhost:8080')
    .option('--token <token>', 'access token (svc prints one at its first start; admins make more at /api/tokens)')
    .action(printing(async (opts: { host?: string; token?: string; json?: boolean }, out) => {
      // Without a terminal to ask on, a missing address is not guessed: the default would replace a working configuration.
      const host = opts.host ?? (onTerminal() ? await ask('Server address', { default: 'http://localhost:8080' }) : undefined);
      if (host === undefined) throw new CliError(`No terminal to ask on: pass --host <url>${opts.token === undefined ? ' and --token <token>' : ''} (${configPath()} is left as it is)`, 2);
      let url: URL;
      try {
        url = new URL(host);
      } catch {
        throw new CliError(`--host must be a URL such as http://localhost:8080, got ${host}`, 2);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--host must be an http or https URL, got ${host}`, 2);
      const given = opts.token ?? (await ask('Access token', { secret: true }));
      // No token given (none asked for without a terminal, or an empty answer): the one saved before stays.
      const previous = given ? undefined : readableSavedToken();
      const token = given || previous;
      const path = saveConfig({ server: host.replace(/\/+$/, ''), token: token || undefined });
      out.line(`Configured the server ${host}${previous ? ' (the token saved before kept)' : token ? '' : ' (no token)'} in ${path}`);
      out.result({ server: host.replace(/\/+$/, ''), token: Boolean(token), file: path });
    }));
}
