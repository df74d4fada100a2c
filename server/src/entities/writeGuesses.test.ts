import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WriteGuesses } from './writeGuesses.ts';

/** How many of the next `n` writes may guess. */
function allowedOf(g: WriteGuesses, n: number): number {
  let allowed = 0;
  for (let i = 0; i < n; i++) if (g.allowed()) allowed++;
  return allowed;
}

test('guesses are made while they hold', () => {
  const g = new WriteGuesses();
  for (let i = 0; i < 1000; i++) {
    assert.ok(g.allowed());
    g.guessed();
    if (i % 4 === 0) g.wrong(); // a quarter wrong: still worth it
  }
  assert.equal(allowedOf(g, 100), 100);
});

test('guessing stops while most guesses are wrong, probing now and then, and resumes once they hold again', () => {
  const g = new WriteGuesses();
  // A server started on a catalog whose entities all hold values: every guess is wrong.
  let made = 0;
  for (let i = 0; i < 2000; i++) {
    if (!g.allowed()) continue;
    made++;
    g.guessed();
    g.wrong();
  }
  assert.ok(made < 100, `${made} guesses made of 2000 writes`);
  assert.ok(allowedOf(g, 320) >= 5, 'one write in 32 still guesses');
  // The entities of the catalog are kept by now; guesses (of new entities) hold again.
  let resumed = 0;
  for (let i = 0; i < 20000 && resumed === 0; i++) {
    if (!g.allowed()) continue;
    g.guessed();
    if (allowedOf(g, 10) === 10) resumed = i;
  }
  assert.ok(resumed > 0, 'guessing resumed');
});
