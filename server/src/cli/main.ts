/**
 * `svc`, the command-line client of the svc catalog (a client of the REST API only). Exit codes: 0 on
 * success, 1 when the operation failed (refused by the server, server unreachable, token rejected),
 * 2 on a usage error (bad flags, a bad file, no configuration).
 *
 *   svc init --host http://localhost:8080 --token "$TOKEN"
 *   svc properties upsert -f properties.yaml
 */
import { Command, CommanderError } from 'commander';
import { datasetCommand } from './commands/dataset/index.ts';
import { deleteCommand } from './commands/delete.ts';
import { initCommand } from './commands/init.ts';
import { propertiesCommand } from './commands/properties/index.ts';
import { tasksCommand } from './commands/tasks/index.ts';
import { timeseriesCommand } from './commands/timeseries/index.ts';
import { CliError } from './errors.ts';

export function program(): Command {
  const root = new Command('svc')
    .description('Command-line client of the svc metadata catalog')
    .version(process.env.npm_package_version ?? '0.1.0')
    .addCommand(initCommand())
    .addCommand(propertiesCommand())
    .addCommand(datasetCommand())
    .addCommand(timeseriesCommand())
    .addCommand(tasksCommand())
    .addCommand(deleteCommand());
  // Usage errors of every command exit 2 (commander's own exit is 1).
  const exitOverride = (c: Command) => {
    c.exitOverride();
    c.commands.forEach(exitOverride);
  };
  exitOverride(root);
  return root;
}

export async function run(argv: string[]): Promise<number> {
  try {
    await program().parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version asked for are answers, not errors; help shown for a missing subcommand (commander's
      // exit code 1) is a usage error, as is anything else commander refuses (it has printed why already).
      const answer = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || (err.code === 'commander.help' && err.exitCode === 0);
      return answer ? 0 : 2;
    }
    if (err instanceof CliError) {
      process.stderr.write(`${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`svc failed unexpectedly: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

process.exitCode = await run(process.argv);
