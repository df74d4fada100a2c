/**
 * `npm run operator` / `svc-operator`: configuration from the environment, then the operator until
 * SIGTERM or SIGINT (graceful: reconciles in progress finish, the Lease is released). A replica that
 * loses its Lease exits with code 1, as controller-runtime's managers do, and is restarted by its
 * Deployment.
 */
import pino from 'pino';
import { ConfigError, loadOperatorConfig } from './config.ts';
import { loadKubeConfig } from './kubeConfig.ts';
import { startOperator } from './operator.ts';

async function main(): Promise<void> {
  let config;
  let kc;
  try {
    config = loadOperatorConfig();
    kc = loadKubeConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`svc-operator: configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = pino({ level: config.logLevel, base: { service: 'svc-operator' }, timestamp: pino.stdTimeFunctions.isoTime });
  let operator;
  try {
    operator = await startOperator(config, log, kc);
  } catch (err) {
    log.fatal({ err }, `svc-operator could not start: ${(err as Error).message}`);
    process.exit(1);
  }
  log.info({ port: operator.port, server: config.server, namespace: config.namespace ?? '(all)', identity: config.identity, leaderElection: config.leaderElection }, 'svc-operator started');
  const stop = (signal: string) => {
    log.info({ signal }, 'stopping');
    void operator.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  if ((await operator.done) === 'lost-leadership') process.exit(1);
}

void main();
