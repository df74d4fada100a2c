import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Request, Response } from 'express';
import { SvcError } from '../shared/errors.ts';
import { queryGuard } from './queryGuard.ts';

/** The guard's verdict on a request URL: undefined when it passes, else its error. */
function verdict(url: string): SvcError | undefined {
  let passed = false;
  try {
    queryGuard({ originalUrl: url } as Request, {} as Response, () => (passed = true));
  } catch (err) {
    assert.ok(err instanceof SvcError && err.code === 'VALIDATION', String(err));
    return err;
  }
  assert.ok(passed);
  return undefined;
}

const percent = (bytes: Uint8Array) => [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
const utf8 = new TextDecoder('utf-8', { fatal: true });

test('a value of any bytes, percent-encoded, passes exactly when the bytes are UTF-8 without NUL; else a 400 names the parameter and the bytes', () => {
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 8 }),
    // Overlong forms, surrogates and code points past U+10FFFF, amid valid text.
    fc.tuple(fc.string({ maxLength: 3 }), fc.constantFrom([0xc0, 0xaf], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf0, 0x80, 0x80, 0xaf], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]), fc.string({ maxLength: 3 })).map(
      ([a, mid, b]) => new Uint8Array([...new TextEncoder().encode(a), ...mid, ...new TextEncoder().encode(b)]),
    ),
  );
  fc.assert(
    fc.property(bytes, (b) => {
      let text: string | undefined;
      try {
        text = utf8.decode(b);
      } catch {
        text = undefined;
      }
      const err = verdict(`/openapi/v3/entity/dataset?count=1&query=${percent(b)}`);
      if (text !== undefined && !text.includes('\u0000')) assert.equal(err, undefined, percent(b));
      else {
        assert.ok(err, `${percent(b)} passed`);
        assert.match(err.message, text === undefined ? /^query parameter query: the value ".*" is not valid percent-encoding: ".+" is not UTF-8 \(.+\); expected UTF-8 bytes written as %XX/ : /^query parameter query: the value contains the NUL character/);
      }
    }),
    { numRuns: 3000 },
  );
});

test('a % not followed by two hexadecimal digits is refused, in a value or a name; every parameter at fault is named', () => {
  fc.assert(
    fc.property(fc.constantFrom('%', '%Z', '%ZZ', '%2', '%%', '%G0', '%-1'), fc.string({ unit: 'grapheme-ascii', maxLength: 3 }).map(encodeURIComponent), (bad, around) => {
      const err = verdict(`/x?a=${around}${bad}&${around}${bad}=1&ok=1`);
      assert.ok(err);
      assert.equal(err.violations.length, 2, err.message);
      assert.match(err.violations[0]!, /^query parameter a: the value ".*" is not valid percent-encoding: ".*" is not % and two hexadecimal digits/);
      assert.match(err.violations[1]!, /^The query parameter name ".*" is not valid percent-encoding/);
    }),
  );
});

test('any text percent-encoded as browsers and clients do passes, + included', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => s.isWellFormed() && !s.includes('\u0000')), (s) => {
      assert.equal(verdict(`/x?q=${encodeURIComponent(s)}&p=${new URLSearchParams({ v: s }).toString().slice(2)}`), undefined, s);
    }),
  );
  assert.equal(verdict('/x'), undefined);
  assert.equal(verdict('/x?'), undefined);
  assert.equal(verdict('/x?a&b=&&c=1+2'), undefined);
});
