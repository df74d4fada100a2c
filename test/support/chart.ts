/**
 * The Helm chart under test (`charts/svc`): helm and kubectl run as child processes (`HELM_BIN` from
 * test/harness/helm.ts, kubectl from PATH against `KUBECONFIG`), and the rendered objects parsed.
 */
import { execFile, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

export const ROOT = resolve(import.meta.dirname, '../..');
export const CHART = resolve(ROOT, 'charts/svc');

const run = promisify(execFile);

/** A rendered Kubernetes object. */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} & Record<string, any>;

function helmBin(): string {
  const bin = process.env.HELM_BIN;
  if (!bin) throw new Error('HELM_BIN is not set: use test/harness/helm.ts');
  return bin;
}

/** Runs helm; rejects with its stderr when it fails. */
export async function helm(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run(helmBin(), args, { env: process.env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')}: ${e.stderr?.trim() || e.message}`);
  }
}

/** `helm template` of the chart as release `rel` in `namespace`; the objects it renders. */
export async function render(args: string[] = [], namespace = 'catalog'): Promise<Manifest[]> {
  return parseManifests(await helm('template', 'rel', CHART, '--namespace', namespace, ...args));
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
}

/** The one object of this kind and name; fails when there is not exactly one. */
export function find(docs: Manifest[], kind: string, name: string): Manifest {
  const found = docs.filter((d) => d.kind === kind && d.metadata.name === name);
  if (found.length !== 1) throw new Error(`${kind}/${name}: found ${found.length} in ${docs.map((d) => `${d.kind}/${d.metadata.name}`).join(', ')}`);
  return found[0]!;
}

/** A container's environment as name → value (or `secret:<name>/<key>`, `field:<path>`). */
export function envOf(container: { env?: { name: string; value?: string; valueFrom?: any }[] }): Record<string, string> {
  return Object.fromEntries(
    (container.env ?? []).map((e) => [
      e.name,
      e.valueFrom?.secretKeyRef ? `secret:${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}` : e.valueFrom?.fieldRef ? `field:${e.valueFrom.fieldRef.fieldPath}` : (e.value ?? ''),
    ]),
  );
}

/** Runs `command` with `input` on stdin; resolves to its exit code, stdout and stderr once it ends. */
function runProcess(command: string, args: string[], input = ''): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env: process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, out, err }));
    child.stdin.end(input);
  });
}

/** Runs kubectl with `input` on stdin; resolves to stdout, rejects with stderr. */
export async function kubectl(args: string[], input?: string): Promise<string> {
  const { code, out, err } = await runProcess('kubectl', args, input);
  if (code !== 0) throw new Error(`kubectl ${args.join(' ')} (exit ${code}): ${err.trim()}`);
  return out;
}

/** `helm <args>` started now (for a command that waits on hooks); resolves to its exit code and output when it ends. */
export async function helmAsync(args: string[]): Promise<{ code: number | null; output: string }> {
  const { code, out, err } = await runProcess(helmBin(), args);
  return { code, output: out + err };
}
