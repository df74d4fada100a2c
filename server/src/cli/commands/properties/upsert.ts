/** `svc properties upsert -f <file.yaml>`: creates or updates each structured property of the file, in order; stops at the first the server refuses. */
import { Command } from 'commander';
import { Client, enc } from '../../client.ts';
import { loadConfig } from '../../config.ts';
import { CliError } from '../../errors.ts';
import { command, printing } from '../../output.ts';
import { readPropertyFile } from '../../propertyFile.ts';

export function upsertCommand(): Command {
  return command('upsert', 'Create or update the structured properties of a YAML file', ['svc properties upsert -f properties.yaml'])
    .requiredOption('-f, --file <file.yaml>', 'a YAML list of properties (id or urn, type, cardinality, entity_types, allowed_values, …)')
    .action(printing(async (opts: { file: string; json?: boolean }, out) => {
      const specs = readPropertyFile(opts.file, out.warn);
      const client = new Client(loadConfig());
      const done: string[] = [];
      for (const spec of specs) {
        // DataHub's CLI keeps only the allowed types that exist, warning about the others.
        const qualifier = spec.definition.typeQualifier as { allowedTypes: string[] } | undefined;
        if (qualifier) {
          const kept: string[] = [];
          for (const t of qualifier.allowedTypes) {
            const a = await client.request('HEAD', `/openapi/v3/entity/entityType/${enc(t)}`);
            if (a.status === 204 || a.status === 200) kept.push(t);
            else out.warn(`Input ${t} is not a valid entity type urn. Skipping.`);
          }
          qualifier.allowedTypes = kept;
        }
        try {
          await client.ok('POST', `/openapi/v3/entity/structuredProperty/${enc(spec.urn)}/propertyDefinition?createIfNotExists=false`, { value: spec.definition });
        } catch (err) {
          // Which property of the file was refused (the server's message alone does not say).
          if (err instanceof CliError && specs.length > 1) throw new CliError(`${opts.file}:${spec.line}: ${spec.urn}: ${err.message}`, err.exitCode);
          throw err;
        }
        done.push(spec.urn);
        out.line(`Created structured property ${spec.urn}`);
      }
      out.result(done.map((urn) => ({ urn })));
    }));
}
