/**
 * A command run on a pseudo-terminal (util-linux `script`), answering its prompts in turn: how the
 * CLI's questions are tested as a user at a terminal meets them.
 */
import { spawn } from 'node:child_process';

export interface TerminalRun {
  code: number | null;
  /** Everything the terminal showed (the command's stdout and stderr, and the echo of what was typed), escapes removed. */
  screen: string;
}

const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/** Runs `argv` on a terminal; each answer is typed (with Enter) once the screen ends with its prompt. Fails after `timeoutMs`. */
export function onTerminal(argv: string[], env: Record<string, string | undefined>, answers: { prompt: RegExp; type: string }[], timeoutMs = 30_000): Promise<TerminalRun> {
  return new Promise((done, fail) => {
    const child = spawn('script', ['-qfec', argv.map(quote).join(' '), '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let raw = '';
    let next = 0;
    let answeredAt = 0;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`no end after ${timeoutMs} ms; the terminal shows:\n${plain(raw)}`));
    }, timeoutMs);
    const onOutput = (chunk: Buffer) => {
      raw += chunk.toString();
      const answer = answers[next];
      // Only what appeared since the last answer can be the next prompt.
      if (answer && answer.prompt.test(plain(raw.slice(answeredAt)))) {
        next++;
        answeredAt = raw.length;
        child.stdin.write(`${answer.type}\r`);
      }
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, screen: plain(raw) });
    });
  });
}
