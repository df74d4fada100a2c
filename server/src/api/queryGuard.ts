/**
 * The second check of every request, after its path's (pathGuard.ts): each name and value of its
 * query string must be valid percent-encoding of UTF-8 and decode to a string svc can store
 * ({@link stringProblem}). Express' query parser (Node's `querystring`) keeps `%ZZ` as it is and
 * turns bytes that are no UTF-8 (`%C0%AF`, an overlong `/`; `%ED%A0%80`, an encoded surrogate) into
 * U+FFFD, so a query meant one thing and searched for another; every route then reads its parameters
 * knowing they are what was sent.
 */
import type { NextFunction, Request, Response } from 'express';
import { SvcError } from '../shared/errors.ts';
import { stringProblem } from './inputRules.ts';
import { quoted } from './pathGuard.ts';

const EXPECTED = 'expected UTF-8 bytes written as %XX (e.g. %3A for ":", %C3%A9 for "é")';

/**
 * Why `raw` (a name or value as sent, `+` for a space) is not valid percent-encoding of UTF-8, naming
 * the first sequence at fault; undefined when it is.
 *
 *   encodingProblem('a%ZZ')       // '"%ZZ" is not % and two hexadecimal digits'
 *   encodingProblem('%ED%A0%80')  // '"%ED%A0%80" is not UTF-8 (an encoded UTF-16 surrogate)'
 */
export function encodingProblem(raw: string): string | undefined {
  for (let i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', i)) {
    if (!/^%[0-9A-Fa-f]{2}$/.test(raw.slice(i, i + 3))) return `${quoted(raw.slice(i, i + 3))} is not % and two hexadecimal digits`;
    // A run of encoded bytes, decoded as UTF-8 one character at a time.
    const byte = (k: number) => (/^%[0-9A-Fa-f]{2}$/.test(raw.slice(k, k + 3)) ? parseInt(raw.slice(k + 1, k + 3), 16) : -1);
    const lead = byte(i);
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    // The bytes of the character (an overlong two-byte form shown whole).
    const shown = length || (lead === 0xc0 || lead === 0xc1 ? 2 : 1);
    const bytes = [lead];
    for (let k = 1; k < shown && byte(i + 3 * k) >= 0; k++) bytes.push(byte(i + 3 * k));
    const seq = raw.slice(i, i + 3 * bytes.length);
    const why = utf8Problem(bytes, length);
    if (why) return `${quoted(seq)} is not UTF-8 (${why})`;
    i += 3 * length;
  }
  return undefined;
}

/** Why the bytes of one character, `length` long by its first byte, are not UTF-8. */
function utf8Problem(bytes: number[], length: number): string | undefined {
  const [b0, b1] = [bytes[0]!, bytes[1]];
  if (length === 0) return b0 === 0xc0 || b0 === 0xc1 ? 'an overlong form' : b0 >= 0x80 && b0 <= 0xbf ? 'a continuation byte without a first byte' : 'a byte no UTF-8 text holds';
  if (bytes.length < length) return 'a character cut short';
  if (bytes.slice(1).some((b) => b < 0x80 || b > 0xbf)) return 'a character cut short';
  if ((b0 === 0xe0 && b1! < 0xa0) || (b0 === 0xf0 && b1! < 0x90)) return 'an overlong form';
  if (b0 === 0xed && b1! >= 0xa0) return 'an encoded UTF-16 surrogate';
  if (b0 === 0xf4 && b1! >= 0x90) return 'beyond U+10FFFF';
  return undefined;
}

/** `raw` decoded (`+` as a space, as Express decodes it); the problem of its encoding when it has one. */
function decode(raw: string): { text: string } | { problem: string } {
  try {
    return { text: decodeURIComponent(raw.replaceAll('+', ' ')) };
  } catch {
    return { problem: encodingProblem(raw) ?? 'it does not decode' };
  }
}

export function queryGuard(req: Request, _res: Response, next: NextFunction): void {
  const url = req.originalUrl;
  const at = url.indexOf('?');
  // Without a %, every name and value is text as written (a raw NUL never passes Node's HTTP parser).
  if (at < 0 || !url.includes('%', at)) return next();
  const problems: string[] = [];
  for (const pair of url.slice(at + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const [rawName, rawValue] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    const name = decode(rawName);
    if ('problem' in name) {
      problems.push(`The query parameter name ${quoted(rawName)} is not valid percent-encoding: ${name.problem}; ${EXPECTED}`);
      continue;
    }
    const nameProblem = stringProblem(name.text);
    if (nameProblem) {
      problems.push(`The query parameter name ${quoted(rawName)} ${nameProblem}`);
      continue;
    }
    const value = decode(rawValue);
    if ('problem' in value) problems.push(`query parameter ${name.text}: the value ${quoted(rawValue)} is not valid percent-encoding: ${value.problem}; ${EXPECTED}`);
    else {
      const valueProblem = stringProblem(value.text);
      if (valueProblem) problems.push(`query parameter ${name.text}: the value ${valueProblem}`);
    }
  }
  if (problems.length) throw SvcError.validation(problems);
  next();
}
