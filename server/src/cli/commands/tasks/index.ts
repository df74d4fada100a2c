/** `svc tasks get <id>` and `svc tasks list`: background tasks (cleanups, rebuilds, truncations) and their progress. */
import { Command, Option } from 'commander';
import { Client } from '../../client.ts';
import { loadConfig } from '../../config.ts';
import { CliError } from '../../errors.ts';
import { command, output, printing } from '../../output.ts';
import { TASK_KINDS, TASK_STATES, type Task } from '../../../contract/tasks.ts';

const line = (t: Task) => `${t.id}\t${t.kind}\t${t.state}\t${t.done}/${t.total ?? '?'}\t${t.subject}${t.error ? `\t(last error: ${t.error})` : ''}`;

export function tasksCommand(): Command {
  const get = command('get', 'Show a task: state and progress', ['svc tasks get 42'])
    .argument('<id>', 'the task id (the number of svc:<n>)')
    .action(async (id: string, opts: { json?: boolean }) => {
      const out = output(Boolean(opts.json));
      const n = id.replace(/^svc:/, '');
      if (!/^[1-9][0-9]*$/.test(n)) throw new CliError(`A task id is a number such as 42 (or svc:42), got ${id}`, 2);
      const a = await new Client(loadConfig()).request('GET', `/api/tasks/${n}`);
      if (a.status === 404) throw new CliError(`No task with id ${n}`);
      if (a.status !== 200) throw new CliError(`HTTP ${a.status}`);
      out.line(JSON.stringify(a.body, null, 2));
      out.result(a.body);
    });
  const list = command('list', 'List tasks, newest first (id, kind, state, done/total, subject)', ['svc tasks list --kind timeseries-truncate'])
    .addOption(new Option('--kind <kind>', 'only tasks of this kind').choices(TASK_KINDS))
    .addOption(new Option('--state <state>', 'only tasks in this state').choices(TASK_STATES))
    .option('--subject <subject>', 'only tasks working on this subject')
    .action(printing(async (opts: { kind?: string; state?: string; subject?: string; json?: boolean }, out) => {
      const q = new URLSearchParams(Object.entries({ kind: opts.kind, state: opts.state, subject: opts.subject }).filter((e): e is [string, string] => e[1] !== undefined));
      const body = (await new Client(loadConfig()).ok('GET', `/api/tasks${q.size ? `?${q}` : ''}`)) as { tasks: Task[] };
      if (body.tasks.length === 0) out.line('No tasks');
      for (const t of body.tasks) out.line(line(t));
      out.result(body.tasks);
    }));
  return new Command('tasks').description('Background tasks').addCommand(get).addCommand(list);
}
