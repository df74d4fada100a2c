import { Command } from 'commander';

/** What commands print: lines for people, or with `--json` one JSON document on stdout (diagnostics on stderr). */
export interface Output {
  json: boolean;
  /** A line for people (left out with --json). */
  line(text: string): void;
  /** The machine-readable result (printed with --json; `finish` changes its text, e.g. to write doubles). */
  result(value: unknown, finish?: (text: string) => string): void;
  warn(text: string): void;
}

export function output(json: boolean): Output {
  return {
    json,
    line: (text) => {
      if (!json) process.stdout.write(`${text}\n`);
    },
    result: (value, finish = (text) => text) => {
      if (json) process.stdout.write(`${finish(JSON.stringify(value, null, 2))}\n`);
    },
    warn: (text) => process.stderr.write(`${text}\n`),
  };
}

/** A command that prints for people, or with `--json` for programs; `examples` are shown under its help. */
export function command(name: string, description: string, examples: string[], json = 'machine-readable output'): Command {
  return new Command(name)
    .description(description)
    .option('--json', json)
    .addHelpText('after', `\n${examples.length === 1 ? 'Example' : 'Examples'}:\n${examples.map((e) => `  ${e}`).join('\n')}`);
}

/** A command's action, given the {@link Output} its `--json` option asks for. */
export function printing<O extends { json?: boolean }>(action: (opts: O, out: Output) => Promise<void>): (opts: O) => Promise<void> {
  return (opts) => action(opts, output(Boolean(opts.json)));
}
