/**
 * A YAML file as the CLI's file commands read it: a usage error (exit 2) naming the line of each
 * syntax error, and the line of any node, so that every later problem can name its line too.
 */
import { isScalar, LineCounter, parseDocument, type Node, type YAMLMap } from 'yaml';
import { CliError } from './errors.ts';
import { readTextFile } from './files.ts';

export interface YamlFile {
  contents: unknown;
  /** The 1-based line a node starts on (1 for a node without a position). */
  lineOf(node: unknown): number;
  /** A problem line (`<file>:<line>: unknown key "x" in <what>; the keys are …`) for each key of `map` not in `known`. */
  unknownKeys(map: YAMLMap, known: string[], what: string): string[];
}

export function readYamlFile(path: string): YamlFile {
  const text = readTextFile(path);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) throw new CliError(doc.errors.map((e) => `${path}:${lines.linePos(e.pos[0]).line}: ${e.message.split('\n')[0]}`).join('\n'), 2);
  const lineOf = (n: unknown) => ((n as Node | undefined)?.range ? lines.linePos((n as Node).range![0]).line : 1);
  return {
    contents: doc.contents,
    lineOf,
    unknownKeys: (map, known, what) =>
      map.items.flatMap((pair) => {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        return known.includes(key) ? [] : [`${path}:${lineOf(pair.key)}: unknown key "${key}" in ${what}; the keys are ${known.join(', ')}`];
      }),
  };
}
