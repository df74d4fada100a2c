/** A TCP proxy in front of a test component, to take it out of reach and back without stopping it. */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A TCP proxy to a component (OpenSearch) that can be cut (connections dropped, nothing accepted) and restored on the same port. */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: URL) {}

  async up(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    if (!this.server?.listening) return;
    const closed = new Promise<void>((r) => this.server!.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}
