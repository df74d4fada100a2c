/** What commands print: lines for people, or with `--json` one JSON document on stdout (diagnostics on stderr). */
export interface Output {
  json: boolean;
  /** A line for people (left out with --json). */
  line(text: string): void;
  /** The machine-readable result (printed with --json). */
  result(value: unknown): void;
  warn(text: string): void;
}

export function output(json: boolean): Output {
  return {
    json,
    line: (text) => {
      if (!json) process.stdout.write(`${text}\n`);
    },
    result: (value) => {
      if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
    warn: (text) => process.stderr.write(`${text}\n`),
  };
}
