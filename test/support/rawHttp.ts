/**
 * HTTP requests written byte for byte on a socket, for what `fetch` refuses to send: a Content-Length
 * that lies, a raw NUL in the request line, a body that stalls.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** When the first byte of the answer arrived, in ms after the request was written. */
  answeredAfterMs: number;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
}

/**
 * Writes `head` (the request line and headers, CRLF-separated, without the blank line) and then
 * `body`, keeps the connection open, and returns the first answer; rejects after `timeoutMs`.
 */
export function rawRequest(baseUrl: string, head: string, body: Buffer | string = '', timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let sentAt = 0;
    let firstAt = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms: ${Buffer.concat(chunks).toString()}`));
    }, timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    /** Settles once the answer is whole: at once when the server closed, else after a second's wait for it to. */
    const finish = (closed: boolean) => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? NaN);
      const rest = text.slice(end + 4);
      if (!closed && !(Buffer.byteLength(rest) >= length)) return false;
      const settle = () => {
        clearTimeout(timer);
        clearTimeout(grace);
        socket.destroy();
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest, answeredAfterMs: firstAt - sentAt, closed });
      };
      if (closed) settle();
      else grace ??= setTimeout(settle, 1_000);
      return true;
    };
    socket.on('connect', () => {
      sentAt = Date.now();
      socket.write(`${head}\r\n\r\n`);
      if (body.length) socket.write(body);
    });
    socket.on('data', (c: Buffer) => {
      firstAt ||= Date.now();
      chunks.push(c);
      finish(false);
    });
    socket.on('end', () => {
      if (!finish(true)) {
        clearTimeout(timer);
        reject(new Error(`connection closed without an answer: ${Buffer.concat(chunks).toString()}`));
      }
    });
    socket.on('error', (err) => {
      // The server may close while the request is still being written; the answer is what counts.
      if (!finish(true)) {
        clearTimeout(timer);
        reject(err);
      }
    });
  });
}
