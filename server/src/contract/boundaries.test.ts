/**
 * The parts that run in other processes than the server, the CLI (server/src/cli) and the operator
 * (operator/src), depend on the server only through this contract module and the HTTP client
 * (server/src/client): never on its internals, so that a change inside the server cannot change what
 * they do without changing the contract. The contract depends on nothing but itself; the HTTP client
 * on nothing but the contract.
 *
 * Every import, export … from, dynamic import() and require of every TypeScript file of those parts
 * is read (TypeScript's own pre-processor, `import type` included) and resolved against the tree.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');

/** Each part, and the folders (relative to the root) its files may import from besides packages. */
const RULES: { part: string; may: string[]; packages: 'any' | 'node-only' }[] = [
  { part: 'server/src/cli', may: ['server/src/cli', 'server/src/contract', 'server/src/client'], packages: 'any' },
  { part: 'operator/src', may: ['operator/src', 'server/src/contract', 'server/src/client'], packages: 'any' },
  { part: 'server/src/client', may: ['server/src/client', 'server/src/contract'], packages: 'node-only' },
  { part: 'server/src/contract', may: ['server/src/contract'], packages: 'node-only' },
];

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The module specifiers a file names. */
function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(`${dir}${sep}`) || path.startsWith(`${dir}/`);

/** What `file` imports that its part may not: a relative path outside the allowed folders, or a package where none may be. */
function violations(rule: (typeof RULES)[number]): string[] {
  const out: string[] = [];
  for (const file of filesUnder(rule.part)) {
    // A part's unit tests may set up what they need (the contract's test reads the CRDs with yaml).
    const isTest = file.endsWith('.test.ts');
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) {
        const target = relative(ROOT, resolve(ROOT, dirname(file), spec));
        if (!rule.may.some((dir) => inside(target, dir))) out.push(`${file} imports ${spec} (${target})`);
      } else if (rule.packages === 'node-only' && !isTest && !spec.startsWith('node:')) {
        out.push(`${file} imports the package ${spec}`);
      }
    }
  }
  return out;
}

describe('boundaries between the parts', () => {
  for (const rule of RULES) {
    test(`${rule.part} imports only from ${rule.may.join(', ')}${rule.packages === 'node-only' ? ', and no package but Node’s' : ''}`, () => {
      assert.ok(filesUnder(rule.part).length > 0, `${rule.part} has no files`);
      assert.deepEqual(violations(rule), []);
    });
  }

  test('the check sees every form of import', () => {
    const specs = ts.preProcessFile("import type { A } from './a.ts';\nexport { b } from '../b.ts';\nconst c = await import('../../c.ts');\nimport './d.ts';", true, true).importedFiles.map((f) => f.fileName);
    assert.deepEqual(specs, ['./a.ts', '../b.ts', '../../c.ts', './d.ts']);
  });
});
