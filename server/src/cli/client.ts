/**
 * The CLI's one HTTP client: the configured server and token on every request, and the server's
 * answers turned into one line each (an unreachable server, a rejected token, the server's message).
 */
import { CliError } from './errors.ts';
import type { CliConfig } from './config.ts';

export interface Answer {
  status: number;
  body: unknown;
}

export class Client {
  constructor(private readonly config: CliConfig) {}

  /** Sends a request; resolves with any answer but 401/403 and faults (those throw one clear line). */
  async request(method: string, path: string, body?: unknown): Promise<Answer> {
    let res: Response;
    try {
      res = await fetch(`${this.config.server}${path}`, {
        method,
        headers: { ...(this.config.token ? { authorization: `Bearer ${this.config.token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const c = (err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
      const cause = c?.code ?? c?.errors?.[0]?.code ?? c?.message ?? (err as Error).message;
      throw new CliError(`Cannot reach the server at ${this.config.server} (${cause}): check the address (svc init, or SVC_GMS_URL)`);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text
    }
    if (res.status === 401) throw new CliError(`The server at ${this.config.server} rejected the token (401): run svc init with a valid token, or set SVC_GMS_TOKEN`);
    if (res.status === 403) throw new CliError(`Not allowed: ${messageOf(parsed) ?? 'the token’s role does not permit this'}`);
    if (res.status >= 500) throw new CliError(`The server failed (${res.status}): ${messageOf(parsed) ?? text.slice(0, 200)}`);
    return { status: res.status, body: parsed };
  }

  /** A request that must succeed (2xx); anything else throws the server's message. */
  async ok(method: string, path: string, body?: unknown): Promise<unknown> {
    const a = await this.request(method, path, body);
    if (a.status < 200 || a.status > 299) throw new CliError(messageOf(a.body) ?? `HTTP ${a.status}`);
    return a.body;
  }
}

/** The message of an error body (`{"error", "message"}`), or undefined. */
export function messageOf(body: unknown): string | undefined {
  const b = body as { message?: unknown; error?: unknown } | undefined;
  if (typeof b?.message === 'string') return b.message;
  if (typeof b?.error === 'string') return b.error;
  return undefined;
}

/** A URN as one path segment. */
export const enc = (urn: string) => encodeURIComponent(urn);
