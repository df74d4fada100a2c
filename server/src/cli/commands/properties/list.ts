/** `svc properties list [--details]`: the URNs of every structured property, or each in full. */
import { Command } from 'commander';
import { Client } from '../../client.ts';
import { loadConfig } from '../../config.ts';
import { command, printing } from '../../output.ts';
import { snakeCase } from '../../propertyFile.ts';

interface Page {
  entities: { urn: string; propertyDefinition?: { value: Record<string, unknown> } }[];
  scrollId: string | null;
}

export function listCommand(): Command {
  return command('list', 'List the structured properties', ['svc properties list --details'])
    .option('--details', 'each property in full, not only its URN')
    .action(printing(async (opts: { details?: boolean; json?: boolean }, out) => {
      const client = new Client(loadConfig());
      const all: Page['entities'] = [];
      let scrollId: string | null = null;
      do {
        const page = (await client.ok('GET', `/openapi/v3/entity/structuredProperty?count=1000&aspects=propertyDefinition${scrollId ? `&scrollId=${encodeURIComponent(scrollId)}` : ''}`)) as Page;
        for (const e of page.entities) if (e.propertyDefinition) all.push(e);
        scrollId = page.scrollId;
      } while (scrollId);
      const models = all.map((e) => snakeCase(e.urn, e.propertyDefinition!.value));
      if (opts.details) out.line(JSON.stringify(models, null, 2));
      else for (const e of all) out.line(e.urn);
      out.result(opts.details ? models : all.map((e) => e.urn));
    }));
}
