/** `svc properties …`: structured property definitions. */
import { Command } from 'commander';
import { getCommand } from './get.ts';
import { listCommand } from './list.ts';
import { upsertCommand } from './upsert.ts';

export function propertiesCommand(): Command {
  return new Command('properties').description('Structured property definitions').addCommand(upsertCommand()).addCommand(getCommand()).addCommand(listCommand());
}
