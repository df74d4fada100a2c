import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isDottedName, qualifiedNameProblem } from './qualifiedNames.ts';

/** Characters of names, with those of query syntax, paths and URNs among them. */
const ALPHABET = [...'ab1_-.é', 'ü', '\u0301', '/', '(', ')', '\\', ':', ',', '*', '?', '"', '~', '^', '[', '{', '+', '!', '#', '%', '&', '@', '\t', '\u0000', '字'];
const name = fc.array(fc.constantFrom(...ALPHABET), { minLength: 1, maxLength: 12 }).map((cs) => cs.join(''));

/** The reference: parts between single dots, each of letters, marks, digits, _ and -. */
const dotted = (s: string) => /^[\p{L}\p{M}\p{N}_-]+(\.[\p{L}\p{M}\p{N}_-]+)*$/u.test(s);

test('a qualified name is accepted exactly when it is a dotted name; a refusal names what is wrong', () => {
  fc.assert(
    fc.property(name, (n) => {
      const problem = qualifiedNameProblem(n);
      assert.equal(isDottedName(n), dotted(n), n);
      assert.equal(problem === undefined, dotted(n), `${JSON.stringify(n)}: ${problem}`);
      if (problem) {
        assert.ok(problem.startsWith(`Qualified name ${n} is not a dotted name: `), problem);
        assert.ok(problem.endsWith('a qualified name is names of letters, digits, _ and - joined by single dots, e.g. io.acryl.privacy.retentionTime'), problem);
        const bad = [...n].find((ch) => ch !== '.' && !/[\p{L}\p{M}\p{N}_-]/u.test(ch));
        if (bad !== undefined) assert.ok(problem.includes(JSON.stringify(bad)), `${problem} names ${JSON.stringify(bad)}`);
        else assert.match(problem, /has an empty name/);
      }
    }),
    { numRuns: 5000 },
  );
});

test('the issue’s names: /, (, \\ and .. are refused; dotted names with letters of any script are not', () => {
  for (const n of ['a/b', 'a(b)', 'a\\b', 'a..b', '.a', 'a.', 'structuredProperties.:a', '']) assert.ok(qualifiedNameProblem(n), n);
  for (const n of ['io.acryl.privacy.retentionTime', 'a-b.c_d', 'daten.größe', '名前.x', '123', '3f2a0b1c-9d2e-4f5a-8b6c-7d8e9f0a1b2c']) assert.equal(qualifiedNameProblem(n), undefined, n);
});

test('a name shaped like a versioned property’s search field is refused; other names under _versioned are not', () => {
  assert.match(qualifiedNameProblem('_versioned.a.20240614080000.string')!, /is the form of a versioned property's search field/);
  assert.equal(qualifiedNameProblem('_versioned.x'), undefined);
});
