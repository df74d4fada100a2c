/**
 * Answers for requests Node's HTTP parser refuses before Express sees them (a request line or headers
 * over Node's limit, bytes that are not HTTP, a request not received in full in time): the same JSON
 * error body as every other error, instead of Node's empty one, then the connection closes.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { ERROR_CODES, type ErrorCode } from '../shared/errors.ts';

/** What each refusal of Node's HTTP parser (llhttp's error codes) means for the sender. */
const PARSE_ERRORS: Record<string, string> = {
  HPE_INVALID_URL: 'percent-encode control characters and spaces in the path',
  HPE_INVALID_METHOD: 'the method is not an HTTP method',
  // A space in the path ends the path early, and what follows is read as the version.
  HPE_INVALID_VERSION: 'percent-encode control characters and spaces in the path',
  HPE_INVALID_CONSTANT: 'percent-encode control characters and spaces in the path',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds a character HTTP does not allow (control characters, or a space in a name)',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'the request has both Content-Length and Transfer-Encoding: send one of them',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must end with chunked, and a request with Transfer-Encoding has no Content-Length: send one of them',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length must be one decimal number, sent once, and a request with Content-Length has no Transfer-Encoding: send one of them',
  HPE_INVALID_CHUNK_SIZE: 'a chunk of the chunked body does not start with its size in hexadecimal',
  HPE_CR_EXPECTED: 'a line of the request does not end with CRLF',
  HPE_LF_EXPECTED: 'a line of the request does not end with CRLF',
};

function answer(err: NodeJS.ErrnoException, requestTimeoutMs: number): [number, string] {
  const parse = PARSE_ERRORS[err.code ?? ''] ?? 'the bytes received are not an HTTP/1.1 request';
  const [code, message]: [ErrorCode, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ['BAD_REQUEST', 'The request line and headers are larger than 16 KB; a URN in the path is at most 512 bytes when URL-encoded']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', `The request was not received in full within ${requestTimeoutMs} ms (SVC_REQUEST_TIMEOUT_MS)`]
        : ['BAD_REQUEST', `Malformed HTTP request (${err.code ?? 'parse error'}): ${parse}`];
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
