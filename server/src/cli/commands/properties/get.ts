/** `svc properties get --urn <urn or id> [--to-file f]`: a structured property in the snake_case form of the definition files. */
import { Command } from 'commander';
import { stringify } from 'yaml';
import { Client, enc, messageOf } from '../../client.ts';
import { loadConfig } from '../../config.ts';
import { CliError } from '../../errors.ts';
import { writeTextFile } from '../../files.ts';
import { command, printing } from '../../output.ts';
import { isPropertyUrn, propertyUrn, snakeCase } from '../../propertyFile.ts';

export function getCommand(): Command {
  return command('get', 'Show a structured property (as JSON, or written as YAML with --to-file)', ['svc properties get --urn io.acryl.privacy.retentionTime'], 'machine-readable output (the same JSON, on stdout)')
    .requiredOption('--urn <urn>', 'the property URN, or its id')
    .option('--to-file <file>', 'write the property as YAML to this file')
    .action(printing(async (opts: { urn: string; toFile?: string; json?: boolean }, out) => {
      // Another entity's URN would otherwise be prefixed into urn:li:structuredProperty:urn:li:… and reported missing.
      if (opts.urn.startsWith('urn:') && !isPropertyUrn(opts.urn)) throw new CliError(`${opts.urn} is not a structured property URN (urn:li:structuredProperty:<id>): give one, or the property's id`, 2);
      const urn = propertyUrn(opts.urn);
      const client = new Client(loadConfig());
      const a = await client.request('GET', `/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition`);
      if (a.status === 404) throw new CliError(`Structured property ${urn} does not exist`);
      if (a.status !== 200) throw new CliError(messageOf(a.body) ?? `HTTP ${a.status}`, a.status === 400 ? 2 : 1);
      const model = snakeCase(urn, (a.body as { propertyDefinition: { value: Record<string, unknown> } }).propertyDefinition.value);
      // As DataHub's CLI: the property is printed, and also written when --to-file says where (written
      // first, so that a file that cannot be written leaves nothing on stdout).
      if (opts.toFile) writeTextFile(opts.toFile, stringify([model]));
      out.line(JSON.stringify(model, null, 2));
      if (opts.toFile) out.line(`Structured property yaml written to ${opts.toFile}`);
      out.result(model);
    }));
}
