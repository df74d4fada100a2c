/**
 * Questions on the terminal (the `read` package: npm's own prompt, which also hides secrets as they are
 * typed), asked on stderr so that stdout stays the command's output. Without a terminal nothing is
 * asked: the caller gets undefined and says which flag to pass.
 */
import { read } from 'read';
import { CliError } from './errors.ts';

export const onTerminal = () => process.stdin.isTTY === true;

/** The answer (the default when it is left empty); undefined without a terminal. `secret` hides what is typed. */
export async function ask(question: string, opts: { default?: string; secret?: boolean } = {}): Promise<string | undefined> {
  if (!onTerminal()) return opts.default;
  try {
    const answer = (await read({ prompt: `${question}:`, default: opts.default, silent: opts.secret, replace: opts.secret ? '*' : undefined, output: process.stderr })).trim();
    return answer || opts.default;
  } catch (err) {
    // Ctrl-C or Ctrl-D at the prompt.
    throw new CliError(`Cancelled (${(err as Error).message})`, 1);
  }
}

/** A yes/no question; only `y` or `yes` is a yes. */
export async function confirm(question: string): Promise<boolean> {
  return /^y(es)?$/i.test((await ask(`${question} [y/N]`)) ?? '');
}
