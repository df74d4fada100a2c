/**
 * A YAML file as the CLI's file commands read it: a usage error (exit 2) naming the line of each
 * syntax error, and the line of any node, so that every later problem can name its line too.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Node, type YAMLMap } from 'yaml';
import { CliError } from './errors.ts';
import { readTextFile } from './files.ts';

export interface YamlFile {
  contents: unknown;
  /** The 1-based line a node starts on (1 for a node without a position). */
  lineOf(node: unknown): number;
  /**
   * The line of what a path of keys and list indexes names under `node` (`lineAt(item, 'schema', 'file')`:
   * the line of the `file:` key), or of the deepest part of the path the file has.
   */
  lineAt(node: unknown, ...keys: (string | number)[]): number;
  /** Adds to `problems` a line (`<file>:<line>: unknown key "x" in <what>; the keys are …`) for each key of `map` not in `known`. */
  unknownKeys(map: YAMLMap, known: string[], what: string, problems: string[]): void;
}

export function readYamlFile(path: string): YamlFile {
  const text = readTextFile(path);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) throw new CliError(doc.errors.map((e) => `${path}:${lines.linePos(e.pos[0]).line}: ${e.message.split('\n')[0]}`).join('\n'), 2);
  const lineOf = (n: unknown) => ((n as Node | undefined)?.range ? lines.linePos((n as Node).range![0]).line : 1);
  // Numbers svc cannot keep as written are told with their line here, as the server would refuse them
  // (and quote the rounded number, not the one written).
  const numbers: string[] = [];
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'number') return;
      const written = node.source ?? String(node.value);
      if (!Number.isFinite(node.value)) numbers.push(`${path}:${lineOf(node)}: ${written} is not a number svc keeps: write a finite number`);
      else if (/^[-+]?[0-9]+$/.test(written) && !Number.isSafeInteger(node.value)) {
        numbers.push(`${path}:${lineOf(node)}: the integer ${written} is beyond ±9007199254740991 and cannot be kept exactly; write it as a string, or as a decimal (${node.value.toExponential()}) if rounding is acceptable`);
      }
    },
  });
  if (numbers.length) throw new CliError(numbers.join('\n'), 2);
  const lineAt = (node: unknown, ...keys: (string | number)[]) => {
    let at = node;
    let line = lineOf(node);
    for (const step of keys) {
      if (isMap(at)) {
        const pair = at.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === String(step));
        if (!pair) break;
        [at, line] = [pair.value, lineOf(pair.key)];
      } else if (isSeq(at) && typeof step === 'number' && at.items[step] !== undefined && at.items[step] !== null) {
        at = at.items[step];
        line = lineOf(at);
      } else break;
    }
    return line;
  };
  return {
    contents: doc.contents,
    lineOf,
    lineAt,
    unknownKeys: (map, known, what, problems) => {
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (!known.includes(key)) problems.push(`${path}:${lineOf(pair.key)}: unknown key "${key}" in ${what}; the keys are ${known.join(', ')}`);
      }
    },
  };
}
