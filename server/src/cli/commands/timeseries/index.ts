/** `svc timeseries …`: time series aspects. */
import { Command } from 'commander';
import { truncateCommand } from './truncate.ts';

export function timeseriesCommand(): Command {
  return new Command('timeseries').description('Time series aspects').addCommand(truncateCommand());
}
