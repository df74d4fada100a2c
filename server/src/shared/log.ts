/** JSON logs (pino), one logger for the process; child loggers per concern. */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'svc' }, timestamp: pino.stdTimeFunctions.isoTime });
}

/**
 * Awaits one step of a shutdown, logging a warning every `everyMs` while it is still waiting, so a stop
 * that hangs says on what.
 */
export async function shutdownStep<T>(log: Logger, step: string, work: Promise<T>, everyMs = 10_000): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => log.warn({ step, waitedMs: Date.now() - started }, `shutdown: still waiting for ${step}`), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
