/**
 * The CLI's one HTTP client: the configured server and token on every request, and the server's
 * answers turned into one line each (an unreachable server, a rejected token, the server's message).
 */
import { send, Unreachable, messageOf, type Answer } from '../client/http.ts';
import { CliError } from './errors.ts';
import type { CliConfig } from './config.ts';

export { enc, messageOf, type Answer } from '../client/http.ts';

export class Client {
  constructor(private readonly config: CliConfig) {}

  /** Sends a request; resolves with any answer but 401/403 and faults (those throw one clear line). */
  async request(method: string, path: string, body?: unknown): Promise<Answer> {
    let a: Answer;
    try {
      a = await send(this.config, method, path, body);
    } catch (err) {
      if (err instanceof Unreachable) throw new CliError(`Cannot reach the server at ${this.config.server} (${err.reason}): check the address (svc init, or SVC_GMS_URL)`);
      throw err;
    }
    if (a.status === 401) throw new CliError(`The server at ${this.config.server} rejected the token (401): run svc init with a valid token, or set SVC_GMS_TOKEN`);
    if (a.status === 403) throw new CliError(`Not allowed: ${messageOf(a.body) ?? 'the token’s role does not permit this'}`);
    if (a.status >= 500) throw new CliError(`The server failed (${a.status}): ${messageOf(a.body) ?? String(a.body ?? '').slice(0, 200)}`);
    return a;
  }

  /** A request that must succeed (2xx); anything else throws the server's message. */
  async ok(method: string, path: string, body?: unknown): Promise<unknown> {
    const a = await this.request(method, path, body);
    if (a.status < 200 || a.status > 299) throw new CliError(messageOf(a.body) ?? `HTTP ${a.status}`);
    return a.body;
  }
}
