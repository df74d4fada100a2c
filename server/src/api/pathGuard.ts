/**
 * The first check of every request: each segment of its path must be valid percent-encoding of UTF-8
 * and decode to a string svc can store ({@link stringProblem}). Routes then decode their parameters
 * without failing.
 */
import type { NextFunction, Request, Response } from 'express';
import { SvcError } from '../shared/errors.ts';
import { stringProblem } from './inputRules.ts';

/** A piece of input quoted in a message, cut to a readable length. */
export function quoted(s: string, max = 120): string {
  return JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);
}

/** Whether the whole path decodes to storable text (the common case, checked in one call). */
function wholePathFine(path: string): boolean {
  try {
    return stringProblem(decodeURIComponent(path)) === undefined;
  } catch {
    return false;
  }
}

export function pathGuard(req: Request, _res: Response, next: NextFunction): void {
  const path = req.path;
  if (path.includes('%') && !wholePathFine(path)) {
    // Name the segment at fault.
    for (const segment of path.split('/')) {
      if (!segment.includes('%')) continue;
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        throw new SvcError('BAD_REQUEST', `The path segment ${quoted(segment)} is not valid percent-encoding: expected UTF-8 bytes written as %XX (e.g. %3A for ":")`);
      }
      const problem = stringProblem(decoded);
      if (problem) throw new SvcError('BAD_REQUEST', `The path segment ${quoted(segment)} ${problem}`);
    }
  }
  next();
}
