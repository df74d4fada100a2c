/**
 * `npm run system-update [-- --restore-indices]`: migrates the database and creates or updates every
 * search index and mapping (see search/systemUpdate.ts), then exits 0; non-zero with one line saying
 * why otherwise. Safe to run twice, concurrently, and after a crash.
 */
import { parseArgs } from 'node:util';
import { createCatalog } from './catalog.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './shared/log.ts';
import { systemUpdate } from './search/systemUpdate.ts';

const flag = (v: string | undefined) => /^(true|1|yes)$/i.test(v ?? '');

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'restore-indices': { type: 'boolean', default: false } } });
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`svc system-update: configuration error: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const catalog = await createCatalog(config, log, { background: false });
  try {
    const report = await systemUpdate(catalog.pool, catalog.search.backend, catalog.searchOutbox, log, {
      structuredProperties: flag(process.env.ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE),
      reindexMappings: flag(process.env.ELASTICSEARCH_INDEX_BUILDER_MAPPINGS_REINDEX),
      restoreIndices: values['restore-indices'],
    });
    log.info({ ...report, backend: config.searchBackend }, 'system update done');
    return 0;
  } finally {
    await catalog.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`svc system-update failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
