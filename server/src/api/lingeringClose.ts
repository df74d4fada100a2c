/**
 * A lingering close, as nginx does it (`lingering_close`): a request refused before its body was read
 * (413: the body is over the limit) is answered at once, and the connection is then closed only once
 * the client has finished sending, or a bound is reached. Closing a socket with unread bytes sends a
 * TCP reset, and a client still sending the body (fetch, Python's requests, any that read the answer
 * only once the body is sent) sees that reset instead of the 413.
 *
 * After the answer, svc closes its side of the connection and reads on, discarding, until the client
 * closes its side, {@link LINGER_MS} pass, or {@link LINGER_BYTES} more arrive; then the connection
 * is destroyed (a client sending more than that, or slower, may still see a reset).
 */
import type { Request } from 'express';
import type { Socket } from 'node:net';

/** How long a refused request's remaining body is read and discarded (nginx's `lingering_time`). */
export const LINGER_MS = 30_000;
/** How much of a refused request's remaining body is read and discarded. */
export const LINGER_BYTES = 256 * 1024 * 1024;

/** Makes the close of `req`'s connection, once its answer is sent, a lingering one (see above). */
export function lingerOnClose(req: Request): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (!socket || (socket as { svcLingering?: boolean }).svcLingering) return;
  (socket as { svcLingering?: boolean }).svcLingering = true;
  // Node's HTTP server closes a connection whose answer says `Connection: close` with destroySoon():
  // its side ends, and the socket is destroyed as soon as that is written.
  socket.destroySoon = () => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(done, LINGER_MS);
    timer.unref();
    socket.once('end', done);
    socket.once('close', () => clearTimeout(timer));
    // The rest of the body reaches the request (HTTP's parser still reads the socket): read and dropped.
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > LINGER_BYTES) done();
    });
    req.resume();
    socket.end();
  };
}
