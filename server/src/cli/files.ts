/**
 * The files the CLI's flags name (`-f`, `--to-file`, a dataset's `schema.file`, the configuration):
 * a file that cannot be read or written is one line naming it and saying why, a usage error (exit 2),
 * never a stack trace.
 *
 *   Cannot write /nonexistent/dir/out.yaml: the directory /nonexistent/dir does not exist
 */
import { readFileSync, writeFileSync, type WriteFileOptions } from 'node:fs';
import { dirname } from 'node:path';
import { CliError } from './errors.ts';

/** Why `path` could not be read or written, in words (Node's own message for the rare other causes). */
export function fileProblem(err: unknown, path: string, writing = false): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return writing ? `the directory ${dirname(path)} does not exist` : 'no such file';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'EISDIR':
      return 'it is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    default:
      return (err as Error).message;
  }
}

/** The text of a file; a usage error `Cannot read <path>: <why>` otherwise. */
export function readTextFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`Cannot read ${path}: ${fileProblem(err, path)}`, 2);
  }
}

/** Writes (or replaces) a file; a usage error `Cannot write <path>: <why>` otherwise. */
export function writeTextFile(path: string, text: string, options?: WriteFileOptions): void {
  try {
    writeFileSync(path, text, options);
  } catch (err) {
    throw new CliError(`Cannot write ${path}: ${fileProblem(err, path, true)}`, 2);
  }
}
