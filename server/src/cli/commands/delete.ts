/**
 * `svc delete --urn <urn> [--hard] [-f] [-n]`: a soft delete by default (its `status` set to removed,
 * reversible); `--hard` removes the entity for good and asks first unless `-f` or a dry run. Prints
 * DataHub's summary line.
 */
import { Command } from 'commander';
import { Client, enc, messageOf } from '../client.ts';
import { loadConfig } from '../config.ts';
import { CliError } from '../errors.ts';
import { command, printing } from '../output.ts';
import { confirm, onTerminal } from '../prompt.ts';
import { findEntityType, TIMESERIES_ASPECTS } from '../../contract/entities.ts';

/**
 * What a hard delete of the entity takes: its versioned aspects (the latest of each, as the entity's
 * GET shows them) and the entries of its time series aspects (counted page by page).
 */
async function hardDeleteImpact(client: Client, type: string, urn: string, shown: Record<string, unknown>): Promise<{ versioned: number; timeseries: number }> {
  const spec = findEntityType(type);
  const series = new Set(spec ? spec.aspects.filter((a) => TIMESERIES_ASPECTS.has(a)) : []);
  const versioned = Object.keys(shown).filter((k) => k !== 'urn' && !series.has(k)).length;
  let timeseries = 0;
  for (const aspect of series) {
    let scrollId: string | null = null;
    do {
      const page = (await client.ok('GET', `/openapi/v2/timeseries/${type}/${aspect}?urn=${enc(urn)}&count=1000${scrollId ? `&scrollId=${enc(scrollId)}` : ''}`)) as { results: unknown[]; scrollId: string | null };
      timeseries += page.results.length;
      scrollId = page.scrollId;
    } while (scrollId);
  }
  return { versioned, timeseries };
}

export function deleteCommand(): Command {
  return command('delete', 'Delete an entity: soft (reversible, status removed) by default, or --hard', ['svc delete --urn urn:li:structuredProperty:io.acryl.privacy.retentionTime', 'svc delete --urn urn:li:structuredProperty:io.acryl.privacy.retentionTime --hard -f'])
    .requiredOption('--urn <urn>', 'the entity to delete')
    .option('--soft', 'a soft delete (the default), as DataHub\'s CLI takes it')
    .option('--hard', 'remove the entity and every aspect for good (for a structured property: its values everywhere)')
    .option('-f, --force', 'do not ask before a hard delete')
    .option('-n, --dry-run', 'say what would be deleted, delete nothing')
    .action(printing(async (opts: { urn: string; soft?: boolean; hard?: boolean; force?: boolean; dryRun?: boolean; json?: boolean }, out) => {
      if (opts.soft && opts.hard) throw new CliError('Give --soft or --hard, not both', 2);
      const type = /^urn:li:([A-Za-z]+):/.exec(opts.urn)?.[1];
      if (!type) throw new CliError(`--urn must be a URN such as urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD), got ${opts.urn}`, 2);
      const client = new Client(loadConfig());
      const started = performance.now();
      const a = await client.request('GET', `/openapi/v3/entity/${type}/${enc(opts.urn)}?systemMetadata=false`);
      if (a.status === 400) throw new CliError(messageOf(a.body) ?? 'invalid URN', 2);
      if (a.status === 404) {
        out.line(`Nothing deleted for ${opts.urn}`);
        out.result({ urn: opts.urn, deleted: false });
        return;
      }
      if (opts.hard && !opts.force && !opts.dryRun) {
        if (!onTerminal()) throw new CliError('A hard delete asks for confirmation: pass -f (--force) to delete without a terminal', 2);
        if (!(await confirm('This will permanently delete data from svc. Do you want to continue?'))) throw new CliError('Nothing deleted');
      }
      const kind = opts.hard ? 'Hard deleted' : 'Soft deleted';
      // A soft delete writes one row (status); a hard one takes the entity's rows.
      const rows = opts.hard ? await hardDeleteImpact(client, type, opts.urn, (a.body as Record<string, unknown>) ?? {}) : { versioned: 1, timeseries: 0 };
      const impact = `impacts ${rows.versioned} versioned rows and ${rows.timeseries} timeseries aspect rows`;
      if (!opts.dryRun) {
        if (opts.hard) await client.ok('DELETE', `/openapi/v3/entity/${type}/${enc(opts.urn)}`);
        else await client.ok('POST', `/openapi/v3/entity/${type}/${enc(opts.urn)}/status?createIfNotExists=false`, { value: { removed: true } });
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(2);
      const summary = `${kind} 1 entities (${impact}) in ${seconds} seconds.`;
      // DataHub's dry-run line says "delete" for either kind.
      out.line(opts.dryRun ? `[Dry-run] Would delete 1 entities (${impact}).` : summary);
      out.result({ urn: opts.urn, hard: Boolean(opts.hard), dryRun: Boolean(opts.dryRun), deleted: !opts.dryRun });
    }));
}
