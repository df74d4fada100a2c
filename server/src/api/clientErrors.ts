/**
 * Answers for requests Node's HTTP parser refuses before Express sees them (a request line or headers
 * over Node's limit, bytes that are not HTTP, a request not received in full in time): the same JSON
 * error body as every other error, instead of Node's empty one, then the connection closes.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';

function answer(err: NodeJS.ErrnoException, requestTimeoutMs: number): [number, string] {
  const [code, message]: [ErrorCode, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ['BAD_REQUEST', 'The request line and headers are larger than 16 KB; a URN in the path is at most 512 bytes when URL-encoded']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', `The request was not received in full within ${requestTimeoutMs} ms (SVC_REQUEST_TIMEOUT_MS)`]
        : ['BAD_REQUEST', `Malformed HTTP request (${err.code ?? 'parse error'}): percent-encode control characters and spaces in the path`];
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : ERROR_CODES[code].http;
  const title = err.code === 'HPE_HEADER_OVERFLOW' ? 'Request Header Fields Too Large' : ERROR_CODES[code].title;
  return [status, JSON.stringify({ error: title, message })];
}

/** A `clientError` listener for an HTTP server whose requests time out after `requestTimeoutMs`. */
export function clientErrorHandler(requestTimeoutMs: number) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // Nothing can be said on a socket that is gone, or whose response has begun (as Node does).
    const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, body] = answer(err, requestTimeoutMs);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
