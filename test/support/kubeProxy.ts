/**
 * A TCP proxy in front of the test kube-apiserver, and a KubeConfig that goes through it: a client
 * behind it can be cut off (a network partition), healed, or have its connections dropped while new
 * ones are accepted (what the API server does to a watch when it restarts or times it out).
 */
import { connect, createServer, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeProxy {
  config: KubeConfig;
  /** Closes every open connection; new ones are accepted. */
  drop(): void;
  /** Closes every open connection and refuses new ones until {@link heal}. */
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function kubeProxy(kc: KubeConfig): Promise<KubeProxy> {
  const target = new URL(kc.getCurrentCluster()!.server);
  const sockets = new Set<Socket>();
  let refusing = false;
  const proxy = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === kc.getCurrentCluster()!.name ? { ...c, server: `https://127.0.0.1:${port}` } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
  const drop = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    config,
    drop,
    cut() {
      refusing = true;
      drop();
    },
    heal() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        drop();
        proxy.close(() => resolve());
      }),
  };
}
