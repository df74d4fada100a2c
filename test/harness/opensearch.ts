/**
 * A real single-node OpenSearch for tests: started on a free loopback port as the service user,
 * with its data, logs and config on tmpfs, and removed again by `stop()`.
 *
 * Needs `SVC_OPENSEARCH_HOME` and `SVC_JAVA_HOME` (printed by `test/infra/provision.sh opensearch`).
 */
import { chownSync, closeSync, cpSync, mkdirSync, openSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import {
  type Component,
  freePort,
  killOnExit,
  readableByServiceUser,
  requiredEnv,
  serviceDir,
  serviceUser,
  spawnAsServiceUser,
  stopProcess,
  waitWhileRunning,
} from './component.ts';

/** The JVM heap of a test node; the benchmarks of a million documents ask for more (see startOpenSearch). */
const TEST_HEAP = '512m';
/** A bound on a start, not a measure of it: a node starting beside other test files on two busy cores took over 2 minutes. */
const START_TIMEOUT_MS = 300_000;

/** A started OpenSearch whose process can be stopped and started again on the same data and port. */
export interface OpenSearchNode extends Component {
  /** Stops the process (SIGTERM), keeping its data. */
  halt(): Promise<void>;
  /** Starts the process again on the same data and ports; resolves once the cluster is yellow. */
  resume(): Promise<void>;
}

/**
 * Starts OpenSearch and waits until the cluster is at least yellow. Env: `OPENSEARCH_URL`. `heap` is
 * the JVM's (`-Xms` and `-Xmx`), 512 MB unless given.
 */
export async function startOpenSearch({ heap = TEST_HEAP }: { heap?: string } = {}): Promise<OpenSearchNode> {
  const cachedHome = requiredEnv('SVC_OPENSEARCH_HOME');
  const javaHome = requiredEnv('SVC_JAVA_HOME');
  const root = serviceDir('opensearch');
  try {
    return await launch(root, cachedHome, javaHome, heap);
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

async function launch(root: string, cachedHome: string, javaHome: string, heap: string): Promise<OpenSearchNode> {
  // The cache usually sits under root's home, which the service user cannot enter: run a copy then.
  let home = cachedHome;
  if (!readableByServiceUser(join(cachedHome, 'lib'))) {
    home = join(root, 'home');
    cpSync(cachedHome, home, { recursive: true });
  }
  const user = serviceUser();
  const dirs = {
    config: join(root, 'config'),
    data: join(root, 'data'),
    logs: join(root, 'logs'),
    tmp: join(root, 'tmp'),
  };
  for (const dir of Object.values(dirs)) {
    mkdirSync(dir, { recursive: true });
    chownSync(dir, user.uid, user.gid);
  }
  cpSync(join(cachedHome, 'config', 'log4j2.properties'), join(dirs.config, 'log4j2.properties'));
  writeFileSync(join(dirs.config, 'opensearch.yml'), '# settings are passed on the command line\n');
  writeFileSync(join(dirs.config, 'jvm.options'), jvmOptions());
  for (const file of ['log4j2.properties', 'opensearch.yml', 'jvm.options']) {
    chownSync(join(dirs.config, file), user.uid, user.gid);
  }

  const httpPort = await freePort();
  const transportPort = await freePort();
  const consoleLog = join(dirs.logs, 'console.log');
  const url = `http://127.0.0.1:${httpPort}`;

  const spawnNode = async () => {
    const out = openSync(consoleLog, 'a');
    chownSync(consoleLog, user.uid, user.gid);
    const node = spawnAsServiceUser(
      join(home, 'bin', 'opensearch'),
      [
        '-Ecluster.name=svc-test',
        '-Enode.name=svc-test',
        '-Ediscovery.type=single-node',
        '-Enetwork.host=127.0.0.1',
        `-Ehttp.port=${httpPort}`,
        `-Etransport.port=${transportPort}`,
        `-Epath.data=${dirs.data}`,
        `-Epath.logs=${dirs.logs}`,
        // tmpfs and small disks must not flip indices to read-only in the middle of a test run.
        '-Ecluster.routing.allocation.disk.threshold_enabled=false',
        '-Ebootstrap.memory_lock=false',
      ],
      {
        cwd: root,
        stdio: ['ignore', out, out],
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: root,
          LANG: 'C.UTF-8',
          JAVA_HOME: javaHome,
          OPENSEARCH_JAVA_HOME: javaHome,
          OPENSEARCH_PATH_CONF: dirs.config,
          OPENSEARCH_TMPDIR: dirs.tmp,
          OPENSEARCH_JAVA_OPTS: `-Xms${heap} -Xmx${heap}`,
        },
      },
    );
    closeSync(out);
    killOnExit(node);
    try {
      await waitWhileRunning(
        node,
        'OpenSearch to report yellow',
        async () => {
          const res = await fetch(`${url}/_cluster/health?wait_for_status=yellow&timeout=1s`, {
            signal: AbortSignal.timeout(5_000),
          });
          await res.arrayBuffer();
          return res.status === 200;
        },
        START_TIMEOUT_MS,
        consoleLog,
      );
    } catch (err) {
      await stopProcess(node, 20_000);
      throw err;
    }
    return node;
  };

  let child: ChildProcess | undefined;
  const halt = async () => {
    if (child) await stopProcess(child, 20_000);
    child = undefined;
  };
  const stop = async () => {
    await halt();
    rmSync(root, { recursive: true, force: true });
    removeEmptyPerfDataDir(user.name);
  };
  const resume = async () => {
    if (child) return;
    try {
      child = await spawnNode();
    } catch (err) {
      await stop();
      throw err;
    }
  };
  await resume();
  return { name: 'opensearch', env: { OPENSEARCH_URL: url }, stop, halt, resume };
}

/**
 * The launcher's helper JVMs leave /tmp/hsperfdata_<user> behind (the launcher drops
 * JAVA_TOOL_OPTIONS, so -XX:-UsePerfData cannot reach them). Removed only when empty, that is
 * when no other JVM of the user is running.
 */
function removeEmptyPerfDataDir(userName: string): void {
  try {
    rmdirSync(`/tmp/hsperfdata_${userName}`);
  } catch {
    // Not there, or in use by another JVM.
  }
}

/** JVM options for a small test node: no GC log files, no heap dumps, temp files in our folder. */
function jvmOptions(): string {
  return [
    '-XX:+UseG1GC',
    '-XX:G1ReservePercent=25',
    '-XX:InitiatingHeapOccupancyPercent=30',
    '-Djava.io.tmpdir=${OPENSEARCH_TMPDIR}',
    '-XX:-HeapDumpOnOutOfMemoryError',
    // No hsperfdata files in /tmp.
    '-XX:-UsePerfData',
    '-XX:ErrorFile=logs/hs_err_pid%p.log',
    '-Xlog:disable',
    '-Xlog:all=warning:stderr:utctime,level,tags',
    '18-:-Djava.security.manager=allow',
    '20-:--add-modules=jdk.incubator.vector',
    '-Djava.util.concurrent.ForkJoinPool.common.threadFactory=org.opensearch.secure_sm.SecuredForkJoinWorkerThreadFactory',
    '',
  ].join('\n');
}
