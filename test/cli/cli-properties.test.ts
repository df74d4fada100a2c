/**
 * The `svc` binary, run as a child process against a started server: `init`, `properties upsert`,
 * `get` and `list`, their messages, files with problems, exit codes (0 success, 1 failed operation,
 * 2 usage error), an unreachable server and a rejected token.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../harness/component.ts';
import { onTerminal } from '../support/terminal.ts';
import { runSvc, SVC_BIN } from '../support/cli.ts';
import { ADMIN_TOKEN, enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
let dir: string;
/** A loopback address nothing listens on. */
let nowhere: string;

before(async () => {
  s = await startTestServer();
  nowhere = `http://127.0.0.1:${await freePort()}`;
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
});
after(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `svc args…` with its configuration in this test's directory (and `env` on top). */
const svc = (args: string[], env: Record<string, string> = {}) => runSvc(s.url, args, { HOME: dir, SVC_ENV_FILE: join(dir, 'svcenv'), ...env }, dir);

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

// The seed's number property with allowed values 30/60/365, for datasets and data flows.
const RETENTION_YAML = `- id: io.acryl.privacy.retentionTime
  qualified_name: io.acryl.privacy.retentionTime
  type: number
  description: "Retention Time is used to figure out how long to retain records in a dataset"
  display_name: Retention Time
  entity_types:
    - dataset
    - dataFlow
  cardinality: MULTIPLE
  allowed_values:
    - value: 30
      description: 30 days, usually reserved for datasets that are ephemeral and contain pii
    - value: 60
      description: Use this for datasets that drive monthly reporting but contain pii
    - value: 365
      description: Use this for non-sensitive data that can be retained for longer
`;
const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';

describe('svc init and configuration', () => {
  test('init saves the server and token for later commands (readable by its owner only); the environment overrides the file', async () => {
    const cfg = join(dir, 'init-env');
    const r = await svc(['init', '--host', s.url, '--token', ADMIN_TOKEN], { SVC_ENV_FILE: cfg, SVC_GMS_URL: '', SVC_GMS_TOKEN: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Configured the server ${s.url.replace(/[.]/g, '\\.')} in ${cfg}`));
    assert.equal(statSync(cfg).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), { gms: { server: s.url, token: ADMIN_TOKEN } });
    const listed = await svc(['properties', 'list'], { SVC_ENV_FILE: cfg, SVC_GMS_URL: '', SVC_GMS_TOKEN: '' });
    assert.equal(listed.code, 0, listed.stderr);
    const overridden = await svc(['properties', 'list'], { SVC_ENV_FILE: cfg, SVC_GMS_URL: nowhere, SVC_GMS_TOKEN: '' });
    assert.equal(overridden.code, 1);
    assert.equal(overridden.stderr, `Cannot reach the server at ${nowhere} (ECONNREFUSED): check the address (svc init, or SVC_GMS_URL)\n`);
  });

  test('on a terminal, init asks for what is missing: the address with its default, the token without showing it', async () => {
    const cfg = join(dir, 'init-terminal');
    const env = { PATH: process.env.PATH, SVC_ENV_FILE: cfg };
    const r = await onTerminal([process.execPath, SVC_BIN, 'init'], env, [
      { prompt: /Server address: \(http:\/\/localhost:8080\) $/, type: s.url },
      { prompt: /Access token: $/, type: ADMIN_TOKEN },
    ]);
    assert.equal(r.code, 0, r.screen);
    assert.ok(!r.screen.includes(ADMIN_TOKEN), `the token is not shown: ${r.screen}`);
    assert.match(r.screen, new RegExp(`Access token: \\*{${ADMIN_TOKEN.length}}\n`));
    assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), { gms: { server: s.url, token: ADMIN_TOKEN } });
    // An empty answer takes the default address; --token given is not asked for.
    const again = await onTerminal([process.execPath, SVC_BIN, 'init', '--token', 'other'], env, [{ prompt: /Server address: \(http:\/\/localhost:8080\) $/, type: '' }]);
    assert.equal(again.code, 0, again.screen);
    assert.ok(!again.screen.includes('Access token'), again.screen);
    assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), { gms: { server: 'http://localhost:8080', token: 'other' } });
  });

  test('without a terminal, init without --host is a usage error naming the flags, and the configuration is left as it is', async () => {
    const cfg = join(dir, 'init-kept');
    const saved = `${JSON.stringify({ gms: { server: s.url, token: ADMIN_TOKEN } }, null, 2)}\n`;
    writeFileSync(cfg, saved);
    const bare = await svc(['init'], { SVC_ENV_FILE: cfg });
    assert.deepEqual([bare.code, bare.stdout, bare.stderr], [2, '', `No terminal to ask on: pass --host <url> and --token <token> (${cfg} is left as it is)\n`]);
    const tokenOnly = await svc(['init', '--token', 'other'], { SVC_ENV_FILE: cfg });
    assert.deepEqual([tokenOnly.code, tokenOnly.stderr], [2, `No terminal to ask on: pass --host <url> (${cfg} is left as it is)\n`]);
    assert.equal(readFileSync(cfg, 'utf8'), saved);
    // A new address without a token keeps the token saved before (it used to be replaced by none).
    const hostOnly = await svc(['init', '--host', `${s.url}/`], { SVC_ENV_FILE: cfg, SVC_GMS_URL: '', SVC_GMS_TOKEN: '' });
    assert.deepEqual([hostOnly.code, hostOnly.stdout], [0, `Configured the server ${s.url}/ (the token saved before kept) in ${cfg}\n`]);
    assert.deepEqual(JSON.parse(readFileSync(cfg, 'utf8')), { gms: { server: s.url, token: ADMIN_TOKEN } });
    const listed = await svc(['properties', 'list'], { SVC_ENV_FILE: cfg, SVC_GMS_URL: '', SVC_GMS_TOKEN: '' });
    assert.equal(listed.code, 0, listed.stderr);
  });

  test("DataHub's ~/.datahubenv (YAML, token '' for none) is read as it is; a file that holds no configuration is a usage error", async () => {
    const env = (cfg: string) => ({ SVC_ENV_FILE: cfg, SVC_GMS_URL: '', SVC_GMS_TOKEN: '' });
    const datahub = join(dir, 'datahubenv');
    writeFileSync(datahub, `gms:\n  server: ${s.url}\n  token: ${ADMIN_TOKEN}\n`);
    const listed = await svc(['properties', 'list'], env(datahub));
    assert.equal(listed.code, 0, listed.stderr);
    // No token: the request goes without one, and the server says so.
    writeFileSync(datahub, `gms:\n  server: ${s.url}\n  token: ''\n`);
    const anonymous = await svc(['properties', 'list'], env(datahub));
    assert.equal(anonymous.code, 1);
    assert.match(anonymous.stderr, /\(401\)/);
    for (const [text, reason] of [
      ['gms: [unclosed\n', /^Flow sequence in block collection must be sufficiently indented/],
      ['- gms\n', /^it holds no mapping$/],
      ['just text\n', /^it holds no mapping$/],
    ] as const) {
      const bad = join(dir, 'bad-env');
      writeFileSync(bad, text);
      const r = await svc(['properties', 'list'], env(bad));
      assert.equal(r.code, 2, text);
      const m = r.stderr.match(new RegExp(`^${bad.replace(/[.]/g, '\\.')} is not a configuration svc can read \\((.*)\\): run svc init again\n$`));
      assert.ok(m, r.stderr);
      assert.match(m[1]!, reason);
    }
  });

  test('no configuration, an unreachable server, a rejected token: one line each, exit 2 / 1 / 1', async () => {
    const none = await svc(['properties', 'list'], { SVC_ENV_FILE: join(dir, 'missing'), SVC_GMS_URL: '', SVC_GMS_TOKEN: '' });
    assert.deepEqual([none.code, none.stderr.trim().split('\n').length], [2, 1]);
    assert.match(none.stderr, /^No server configured: run svc init/);
    const down = await svc(['properties', 'list'], { SVC_GMS_URL: nowhere });
    assert.deepEqual([down.code, down.stderr.trim().split('\n').length], [1, 1]);
    const rejected = await svc(['properties', 'list'], { SVC_GMS_TOKEN: 'wrong' });
    assert.equal(rejected.code, 1);
    assert.match(rejected.stderr, /rejected the token \(401\)/);
    const badHost = await svc(['init', '--host', 'not a url', '--token', 'x'], { SVC_ENV_FILE: join(dir, 'bad-init') });
    assert.equal(badHost.code, 2);
    assert.match(badHost.stderr, /--host must be a URL such as http:\/\/localhost:8080, got not a url/);
  });

  test('usage errors exit 2; --help shows an example and exits 0', async () => {
    const missing = await svc(['properties', 'upsert']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /required option '-f, --file <file.yaml>' not specified/);
    const unknown = await svc(['properties', 'frobnicate']);
    assert.equal(unknown.code, 2);
    // A command group without its subcommand shows its help, as a usage error.
    const bare = await svc(['properties']);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /Usage: svc properties \[options\] \[command\]/);
    const help = await svc(['properties', 'upsert', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Example:\n  svc properties upsert -f properties.yaml/);
  });
});

describe('svc properties', () => {
  test('upsert creates the seed’s property, stored in the svc. forms; get prints it in snake case; --to-file writes YAML', async () => {
    const r = await svc(['properties', 'upsert', '-f', file('retention.yaml', RETENTION_YAML)]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Created structured property ${RETENTION}\n`);
    const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(RETENTION)}/propertyDefinition`), 200)).propertyDefinition.value;
    assert.equal(stored.valueType, 'urn:li:dataType:svc.number');
    assert.deepEqual(stored.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow']);
    assert.deepEqual(stored.allowedValues.map((a: { value: unknown }) => a.value), [{ double: 30 }, { double: 60 }, { double: 365 }]);

    const got = await svc(['properties', 'get', '--urn', 'io.acryl.privacy.retentionTime']);
    assert.equal(got.code, 0, got.stderr);
    assert.deepEqual(JSON.parse(got.stdout), {
      urn: RETENTION,
      qualified_name: 'io.acryl.privacy.retentionTime',
      type: 'urn:li:dataType:svc.number',
      description: 'Retention Time is used to figure out how long to retain records in a dataset',
      display_name: 'Retention Time',
      entity_types: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'],
      cardinality: 'MULTIPLE',
      allowed_values: [
        { value: '30.0', description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
        { value: '60.0', description: 'Use this for datasets that drive monthly reporting but contain pii' },
        { value: '365.0', description: 'Use this for non-sensitive data that can be retained for longer' },
      ],
    });
    const out = join(dir, 'got.yaml');
    const toFile = await svc(['properties', 'get', '--urn', RETENTION, '--to-file', out]);
    // As DataHub's CLI: printed, then written.
    assert.equal(toFile.stdout, `${JSON.stringify(JSON.parse(toFile.stdout.slice(0, toFile.stdout.lastIndexOf('}') + 1)), null, 2)}\nStructured property yaml written to ${out}\n`);
    assert.equal(JSON.parse(toFile.stdout.slice(0, toFile.stdout.lastIndexOf('}') + 1)).urn, RETENTION);
    assert.match(readFileSync(out, 'utf8'), /^- urn: urn:li:structuredProperty:io\.acryl\.privacy\.retentionTime\n/);
  });

  test('a file written by get --to-file upserts as it is: its data type URN is kept, with no warning', async () => {
    const out = join(dir, 'round-trip.yaml');
    const got = await svc(['properties', 'get', '--urn', RETENTION, '--to-file', out]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(readFileSync(out, 'utf8'), /^  type: urn:li:dataType:svc\.number$/m);
    const r = await svc(['properties', 'upsert', '-f', out]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, `Created structured property ${RETENTION}\n`, '']);
    const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(RETENTION)}/propertyDefinition`), 200)).propertyDefinition.value;
    assert.equal(stored.valueType, 'urn:li:dataType:svc.number');
    // Only the short form is lowered; a URN naming no allowed type is refused, not rewritten.
    const bad = await svc(['properties', 'upsert', '-f', file('bad-urn.yaml', '- id: a.c\n  type: urn:li:dataType:svc.decimal\n')]);
    assert.deepEqual([bad.code, bad.stderr], [2, `${join(dir, 'bad-urn.yaml')}:2: Type decimal is not allowed. Allowed types are string, rich_text, number, date, urn\n`]);
  });

  test('get shows the cardinality of a property written without one: SINGLE, as its values are checked', async () => {
    const urn = 'urn:li:structuredProperty:test.cli.nocardinality';
    const definition = { qualifiedName: 'test.cli.nocardinality', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] };
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition`, { method: 'POST', body: JSON.stringify({ value: definition }) }), 200);
    const got = await svc(['properties', 'get', '--urn', urn]);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(JSON.parse(got.stdout).cardinality, 'SINGLE');
  });

  test('a file that cannot be written or read is one line naming it and why, exit 2', async () => {
    const nowhereFile = join(dir, 'no-such-dir', 'out.yaml');
    const write = await svc(['properties', 'get', '--urn', RETENTION, '--to-file', nowhereFile]);
    assert.deepEqual([write.code, write.stdout, write.stderr], [2, '', `Cannot write ${nowhereFile}: the directory ${join(dir, 'no-such-dir')} does not exist\n`]);
    const toDir = await svc(['properties', 'get', '--urn', RETENTION, '--to-file', dir]);
    assert.deepEqual([toDir.code, toDir.stderr], [2, `Cannot write ${dir}: it is a directory\n`]);
    const read = await svc(['properties', 'upsert', '-f', join(dir, 'missing.yaml')]);
    assert.deepEqual([read.code, read.stderr], [2, `Cannot read ${join(dir, 'missing.yaml')}: no such file\n`]);
    const config = await svc(['init', '--host', s.url, '--token', ADMIN_TOKEN], { SVC_ENV_FILE: nowhereFile });
    assert.deepEqual([config.code, config.stderr], [2, `Cannot write ${nowhereFile}: the directory ${join(dir, 'no-such-dir')} does not exist\n`]);
  });

  test('type_qualifier keeps the entity types that exist and skips the others with DataHub’s warning', async () => {
    const r = await svc(['properties', 'upsert', '-f', file('owner.yaml', `- id: test.owner\n  type: urn\n  entity_types: [dataset]\n  type_qualifier:\n    allowed_types: [corpuser, corpGroup, nothingAtAll]\n`)]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, 'Input urn:li:entityType:svc.nothingAtAll is not a valid entity type urn. Skipping.\n');
    const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc('urn:li:structuredProperty:test.owner')}/propertyDefinition`), 200)).propertyDefinition.value;
    assert.deepEqual(stored.typeQualifier, { allowedTypes: ['urn:li:entityType:svc.corpuser', 'urn:li:entityType:svc.corpGroup'] });
  });

  test('get of a property that does not exist: DataHub’s line, exit 1; of another entity’s URN: a usage error', async () => {
    const r = await svc(['properties', 'get', '--urn', 'nothing.here']);
    assert.deepEqual([r.code, r.stderr], [1, 'Structured property urn:li:structuredProperty:nothing.here does not exist\n']);
    const dataset = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)';
    const other = await svc(['properties', 'get', '--urn', dataset]);
    assert.deepEqual([other.code, other.stderr], [2, `${dataset} is not a structured property URN (urn:li:structuredProperty:<id>): give one, or the property's id\n`]);
  });

  test('list shows the URNs, --details each property, --json machine output', async () => {
    const r = await svc(['properties', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.split('\n').includes(RETENTION));
    const json = await svc(['properties', 'list', '--json']);
    assert.ok((JSON.parse(json.stdout) as string[]).includes(RETENTION));
    const details = await svc(['properties', 'list', '--details', '--json']);
    assert.equal((JSON.parse(details.stdout) as { urn: string; type: string }[]).find((p) => p.urn === RETENTION)?.type, 'urn:li:dataType:svc.number');
  });

  test('a server rejection prints the server’s message, exits 1, and applies none of the later entries', async () => {
    const path = file(
      'breaking.yaml',
      `${RETENTION_YAML.replace('cardinality: MULTIPLE', 'cardinality: SINGLE')}- id: test.after.refusal
  type: string
  entity_types: [dataset]
`,
    );
    const r = await svc(['properties', 'upsert', '-f', path]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cardinality cannot be changed from MULTI to SINGLE/);
    // A file of several properties names the one refused, and its line.
    assert.match(r.stderr, /^.*breaking\.yaml:1: urn:li:structuredProperty:io\.acryl\.privacy\.retentionTime: /m);
    assert.equal(r.stdout, '');
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc('urn:li:structuredProperty:test.after.refusal')}/propertyDefinition`), 404);
  });

  test('file problems are usage errors naming the line of the offending key: bad YAML, unknown keys, a bad type, urn and qualified name apart, no id', async () => {
    const badYaml = await svc(['properties', 'upsert', '-f', file('bad.yaml', '- id: x\n  type: [number\n')]);
    assert.equal(badYaml.code, 2);
    assert.match(badYaml.stderr, /bad\.yaml:\d+: /);
    const problems = await svc([
      'properties',
      'upsert',
      '-f',
      file(
        'problems.yaml',
        `- id: a.b\n  type: NUMBER\n  colour: red\n- urn: urn:li:structuredProperty:c.d\n  qualified_name: other\n  type: decimal\n- type: string\n- id: e.f\n  type: string\n  cardinality: SOME\n  allowed_values:\n    - value: x\n    - value: {a: 1}\n`,
      ),
    ]);
    assert.equal(problems.code, 2);
    assert.match(problems.stderr, /^Structured property type should be lowercase\. Updated to number$/m);
    assert.match(problems.stderr, /problems\.yaml:3: unknown key "colour" in property 1; the keys are id, urn, qualified_name/);
    assert.match(problems.stderr, /problems\.yaml:5: property 2: ID in the urn and the qualified_name must match/);
    assert.match(problems.stderr, /problems\.yaml:6: Type decimal is not allowed\. Allowed types are string, rich_text, number, date, urn/);
    assert.match(problems.stderr, /problems\.yaml:7: property 3: id or urn is required/);
    assert.match(problems.stderr, /problems\.yaml:10: property 4: cardinality must be SINGLE or MULTIPLE, got SOME/);
    assert.match(problems.stderr, /problems\.yaml:13: property 4: allowed_values\[1\] needs a plain value/);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc('urn:li:structuredProperty:a.b')}/propertyDefinition`), 404);
    // Numbers svc cannot keep as written are named with their line (the server refused them, quoting the rounded number).
    const numbers = await svc(['properties', 'upsert', '-f', file('numbers.yaml', '- id: n.a\n  type: number\n  allowed_values:\n    - value: .inf\n    - value: 9007199254740993\n')]);
    assert.equal(numbers.code, 2);
    assert.match(numbers.stderr, /numbers\.yaml:4: \.inf is not a number svc keeps: write a finite number/);
    assert.match(numbers.stderr, /numbers\.yaml:5: the integer 9007199254740993 is beyond ±9007199254740991 and cannot be kept exactly/);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc('urn:li:structuredProperty:n.a')}/propertyDefinition`), 404);
    const notList = await svc(['properties', 'upsert', '-f', file('map.yaml', 'id: x\n')]);
    assert.equal(notList.code, 2);
    assert.match(notList.stderr, /expected a list of structured properties/);
    // A list or a mapping where a single value goes is named, not sent as its text ("[object Object]", "1,2");
    // so is an id whose qualified_name differs (as DataHub's CLI asserts), before anything is sent.
    const shapes = await svc([
      'properties',
      'upsert',
      '-f',
      file('shapes.yaml', `- id: ok.first\n  type: string\n  entity_types: [dataset]\n- id: [1, 2]\n  type: {a: b}\n  entity_types: [dataset, {x: 1}]\n- id: g.h\n  qualified_name: other.name\n  type: string\n`),
    ]);
    assert.equal(shapes.code, 2);
    assert.match(shapes.stderr, /shapes\.yaml:4: property 2: id must be a single value, got a list/);
    assert.match(shapes.stderr, /shapes\.yaml:5: property 2: type must be a single value, got a mapping/);
    assert.match(shapes.stderr, /shapes\.yaml:6: property 2: entity_types\[1\] must be an entity type/);
    assert.match(shapes.stderr, /shapes\.yaml:8: property 3: ID in the urn and the qualified_name must match/);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc('urn:li:structuredProperty:ok.first')}/propertyDefinition`), 404);
  });

  test('entity types in DataHub’s namespace are taken as svc’s, in entity_types and type_qualifier alike', async () => {
    const r = await svc([
      'properties',
      'upsert',
      '-f',
      file('datahub-types.yaml', `- id: test.datahub.types\n  type: urn\n  entity_types: [datahub.dataset, urn:li:entityType:datahub.chart]\n  type_qualifier:\n    allowed_types: [datahub.corpuser, urn:li:entityType:datahub.corpGroup]\n`),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc('urn:li:structuredProperty:test.datahub.types')}/propertyDefinition`), 200)).propertyDefinition.value;
    assert.deepEqual(stored.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.chart']);
    assert.deepEqual(stored.typeQualifier, { allowedTypes: ['urn:li:entityType:svc.corpuser', 'urn:li:entityType:svc.corpGroup'] });
  });
});
