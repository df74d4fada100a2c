/** JSON logs (pino), one logger for the process; child loggers per concern. */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'svc' }, timestamp: pino.stdTimeFunctions.isoTime });
}
