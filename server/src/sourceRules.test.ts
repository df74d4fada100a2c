/**
 * Rules of the source itself, for the classes of defect a generated request finds only by luck.
 *
 * A call whose argument count follows the input's size (`out.push(...items)`, `Math.max(...values)`)
 * puts every element on the stack: past about 120,000 elements V8 throws a RangeError, and one thrown
 * outside a promise chain (in a stream's callback) ends the process. A body of 130,000 integers did
 * exactly that. So no call in the server or the operator spreads an argument, except a rest parameter
 * passed on (`lineAt(item, ...where)`: as many as its own caller wrote).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Whether `name` is a rest parameter of a function enclosing `node`. */
function isRestParameter(node: ts.Node, name: string): boolean {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (ts.isFunctionLike(at) && at.parameters.some((p) => p.dotDotDotToken && p.name.getText() === name)) return true;
  }
  return false;
}

/** Every spread argument of a call or `new`, and every `.apply(…, array)`, that is not a rest parameter passed on. */
export function inputSizedSpreads(file: string, text: string): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const where = (n: ts.Node) => `${relative(ROOT, file)}:${src.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${n.getText().slice(0, 100)}`;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      for (const arg of node.arguments ?? []) {
        if (ts.isSpreadElement(arg) && !(ts.isIdentifier(arg.expression) && isRestParameter(arg, arg.expression.text))) found.push(where(node));
      }
      const callee = node.expression;
      const applied = node.arguments?.[1];
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(callee) && callee.name.text === 'apply' && node.arguments.length === 2 && applied && !ts.isArrayLiteralExpression(applied) && !(ts.isIdentifier(applied) && isRestParameter(applied, applied.text))) {
        found.push(where(node));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return found;
}

test('no call in the server or the operator spreads an argument whose length follows the input', () => {
  const found = [...sources(join(ROOT, 'server/src')), ...sources(join(ROOT, 'operator/src'))].flatMap((f) => inputSizedSpreads(f, readFileSync(f, 'utf8')));
  assert.deepEqual(found, [], `write these as loops (push each element) or reduce():\n${found.join('\n')}`);
});

/**
 * Every `name in object` whose name is not written in the source: `'__proto__' in specs` and
 * `'constructor' in specs` are true of any object, so a parameter named so passed a check of known
 * names (the truncation action took `{"constructor": …}` as one of its own). A name from the input is
 * tested with `Object.hasOwn`.
 */
export function computedInTests(file: string, text: string): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword && !ts.isStringLiteralLike(node.left) && !node.left.getText().startsWith('Symbol.')) {
      found.push(`${relative(ROOT, file)}:${src.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText().slice(0, 100)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return found;
}

test('no membership test in the server or the operator takes a name that is not written in the source', () => {
  const found = [...sources(join(ROOT, 'server/src')), ...sources(join(ROOT, 'operator/src'))].flatMap((f) => computedInTests(f, readFileSync(f, 'utf8')));
  assert.deepEqual(found, [], `test a name from the input with Object.hasOwn(object, name):\n${found.join('\n')}`);
  assert.deepEqual(computedInTests(join(ROOT, 'x.ts'), "if (name in specs) f(); if ('entry' in it) g();").map((f) => f.replace(/^x\.ts:\d+: /, '')), ['name in specs']);
});

test('the rule finds the spreads it forbids and lets a rest parameter through', () => {
  const found = inputSizedSpreads(
    join(ROOT, 'x.ts'),
    [
      'out.push(...items);',
      'Math.max(...values);',
      'new Set(...lists);',
      'f.apply(null, args);',
      'const g = (...where: number[]) => h(1, ...where);',
      'f.apply(null, [1, 2]);',
      'function k(...args: unknown[]) { f.apply(this, args); }',
      'const all = [...a, ...b];',
    ].join('\n'),
  );
  assert.deepEqual(
    found.map((f) => f.replace(/^x\.ts:\d+: /, '')),
    ['out.push(...items)', 'Math.max(...values)', 'new Set(...lists)', 'f.apply(null, args)'],
  );
});

test('every npm script that runs a process of svc hands it the script\'s place (exec): a SIGTERM to npm reaches it', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // `node … dist/server/src/main.js` (compiled) as `node … server/src/main.ts` (the sources).
  const running = Object.entries(scripts).filter(([, command]) => /\bnode\b.*\b(server|operator)\/src\/\w+\.(ts|js)\b/.test(command));
  assert.ok(running.length >= 3, JSON.stringify(running));
  for (const [name, command] of running) assert.match(command, /^exec /, `npm run ${name}: ${command}`);
});
