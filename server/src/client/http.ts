/**
 * The catalog's REST API seen from outside, as the CLI and the operator call it: one request with the
 * bearer token, the answer's status and parsed body, and a failure to reach the server told apart
 * from an answer (each caller words it for its own user).
 */

/** A status and the parsed JSON body (the text when it is not JSON, undefined when empty). */
export interface Answer {
  status: number;
  body: unknown;
}

/** The server could not be reached or did not answer in time; `reason` is the socket's code or message. */
export class Unreachable extends Error {
  constructor(
    readonly server: string,
    readonly reason: string,
  ) {
    super(`cannot reach the server at ${server} (${reason})`);
    this.name = 'Unreachable';
  }
}

export interface Endpoint {
  /** Base URL, e.g. http://localhost:8080 (no trailing slash). */
  server: string;
  token?: string;
}

/** Sends one request; resolves with any answer, throws {@link Unreachable} when there is none. */
export async function send(endpoint: Endpoint, method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(`${endpoint.server}${path}`, {
      method,
      headers: { ...(endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const c = (err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
    throw new Unreachable(endpoint.server, c?.code ?? c?.errors?.[0]?.code ?? c?.message ?? (err as Error).message);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body: parsed };
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
