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
