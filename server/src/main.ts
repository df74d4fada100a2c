/** The `npm start` entry: configuration from the environment, then the server until SIGTERM/SIGINT. */
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './shared/log.ts';
import cluster from 'node:cluster';
import { startSvc } from './server.ts';
import { startPrimary } from './cluster.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`svc: configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  let svc: { rootToken: { token: string; generated: boolean }; close(): Promise<void> };
  try {
    if (config.workers > 1 && cluster.isPrimary) {
      const primary = await startPrimary(config, log);
      svc = { rootToken: primary.rootToken, close: () => primary.stop() };
    } else {
      svc = await startSvc(config, log);
    }
  } catch (err) {
    log.fatal({ err }, `svc could not start: ${(err as Error).message}`);
    process.exit(1);
  }
  if (svc.rootToken.generated) {
    process.stdout.write(
      `\nsvc generated the admin token (saved under ${config.dataDir}/admin-token; shown only this once):\n\n  ${svc.rootToken.token}\n\n`,
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    svc.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
