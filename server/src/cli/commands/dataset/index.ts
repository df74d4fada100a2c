/**
 * `svc dataset upsert -f <file>` and `svc dataset get --urn <urn> [--to-file f]`: datasets with their
 * dataset-level and field-level structured properties.
 */
import { randomUUID } from 'node:crypto';
import { Command } from 'commander';
import { stringify } from 'yaml';
import { Client, enc, messageOf } from '../../client.ts';
import { loadConfig } from '../../config.ts';
import { CliError } from '../../errors.ts';
import { writeTextFile } from '../../files.ts';
import { command, printing } from '../../output.ts';
import { readDatasetFile, type Assignment } from '../../datasetFile.ts';
import { doubleText } from '../../../contract/doubles.ts';

/**
 * The doubles of a model `dataset get` prints, written as every read writes them (`365.0`, see
 * doubles.ts) while staying numbers in its JSON and YAML: each stands in the model as a marker string
 * (unique to this run), replaced in the text by the double.
 */
class Doubles {
  private readonly nonce = randomUUID();
  private readonly values: number[] = [];
  mark(n: number): string {
    this.values.push(n);
    return `svc-double-${this.nonce}-${this.values.length - 1}`;
  }
  /** `text` with each marker (quoted in JSON, plain in YAML) replaced by its double. */
  write(text: string): string {
    return text.replace(new RegExp(`"?svc-double-${this.nonce}-(\\d+)"?`, 'g'), (_m, i: string) => doubleText(this.values[Number(i)]!));
  }
}

type FieldModel = { id: string; urn?: string; type?: string; description?: string; structured_properties?: Record<string, unknown> };

/**
 * `schema.fields` as `dataset get` shows them, as DataHub's model does: the fields of `schemaMetadata`
 * (id, native type, description) with their structured properties, then fields that have structured
 * properties but are not in it.
 */
function schemaOf(metadata: { fields: { fieldPath: string; nativeDataType: string; description?: string }[] } | undefined, withProperties: FieldModel[]): { fields: FieldModel[] } | undefined {
  const byId = new Map(withProperties.map((f) => [f.id, f]));
  const fields: FieldModel[] = (metadata?.fields ?? []).map((c) => {
    const p = byId.get(c.fieldPath);
    byId.delete(c.fieldPath);
    return { id: c.fieldPath, type: c.nativeDataType, ...(c.description !== undefined ? { description: c.description } : {}), ...(p ? { urn: p.urn, structured_properties: p.structured_properties } : {}) };
  });
  for (const f of byId.values()) fields.push(f);
  return fields.length ? { fields } : undefined;
}

export function datasetCommand(): Command {
  const upsert = command('upsert', 'Create or update the datasets of a YAML file, with their structured properties', ['svc dataset upsert -f dataset.yaml'])
    .requiredOption('-f, --file <file.yaml>', 'a dataset or a list of them (id + platform or urn, description, structured_properties, schema.fields, …)')
    .action(printing(async (opts: { file: string; json?: boolean }, out) => {
      const specs = readDatasetFile(opts.file, out.warn);
      const client = new Client(loadConfig());
      // As DataHub's CLI: a dataset the server refuses is reported and the others are still written;
      // the exit code then says that some failed.
      // A dataset is written in steps (its own aspects, its fields, each downstream's lineage): one
      // refused after the first is written in part, and said so.
      const results: { urn: string; error?: string; partial?: boolean }[] = [];
      for (const spec of specs) {
        let partial = false;
        try {
          await client.ok('POST', '/openapi/v3/entity/dataset?async=false', [{ urn: spec.urn, ...spec.aspects }]);
          partial = true;
          if (spec.fields.length) {
            // A field exists once its status is written; its structured properties go with it.
            await client.ok(
              'POST',
              '/openapi/v3/entity/schemaField?async=false',
              spec.fields.map((f) => ({ urn: f.urn, status: { value: { removed: false } }, structuredProperties: { value: { properties: f.properties } } })),
            );
          }
          // Each downstream gets this dataset among its upstreams (a patch: its other upstreams stay).
          for (const downstream of spec.downstreams) {
            const upstream = { dataset: spec.urn, type: 'COPY', auditStamp: { time: 0, actor: 'urn:li:corpuser:unknown' } };
            await client.ok('PATCH', `/openapi/v3/entity/dataset/${enc(downstream)}/upstreamLineage`, {
              patch: [{ op: 'add', path: `/upstreams/${spec.urn.replace(/~/g, '~0').replace(/\//g, '~1')}`, value: upstream }],
              arrayPrimaryKeys: { upstreams: ['dataset'] },
            });
          }
        } catch (err) {
          if (!(err instanceof CliError && err.exitCode === 1)) throw err;
          out.warn(`Update failed for id ${spec.urn}. due to ${err.message}`);
          results.push({ urn: spec.urn, error: err.message, ...(partial ? { partial } : {}) });
          continue;
        }
        out.line(`Update succeeded for urn ${spec.urn}.`);
        results.push({ urn: spec.urn });
      }
      out.result(results);
      const notWritten = results.filter((r) => r.error !== undefined && !r.partial).length;
      const inPart = results.filter((r) => r.partial).map((r) => r.urn);
      const of = `of ${specs.length} dataset${specs.length === 1 ? '' : 's'}`;
      const said = [
        ...(notWritten ? [`${notWritten} ${of} not written`] : []),
        ...(inPart.length ? [`${inPart.length} ${of} written in part (the dataset's own aspects, not all of its fields' values and downstreams): ${inPart.join(', ')}`] : []),
      ];
      if (said.length) throw new CliError(said.join('; '));
    }));
  const get = command('get', 'Show a dataset with its dataset-level and field-level structured properties', ['svc dataset get --urn "urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)"'])
    .requiredOption('--urn <urn>', 'the dataset URN')
    .option('--to-file <file>', 'write it as YAML to this file')
    .action(printing(async (opts: { urn: string; toFile?: string; json?: boolean }, out) => {
      const client = new Client(loadConfig());
      const doubles = new Doubles();
      const keyed = (props: Assignment[] | undefined) => Object.fromEntries((props ?? []).map((a) => [a.propertyUrn, a.values.map((v) => ('double' in v ? doubles.mark(v.double) : v.string))]));
      const a = await client.request('GET', `/openapi/v3/entity/dataset/${enc(opts.urn)}`);
      if (a.status === 404) throw new CliError(`Dataset ${opts.urn} does not exist`);
      if (a.status !== 200) throw new CliError(messageOf(a.body) ?? `HTTP ${a.status}`, a.status === 400 ? 2 : 1);
      const body = a.body as Record<string, { value: any } | string>;
      const v = (k: string) => (body[k] as { value: any } | undefined)?.value;
      // The fields with structured properties: the schemaField entities under this dataset.
      const fields: { id: string; urn: string; structured_properties: Record<string, unknown> }[] = [];
      const prefix = `urn:li:schemaField:(${opts.urn},`;
      let scrollId: string | null = null;
      do {
        const page = (await client.ok('GET', `/openapi/v3/entity/schemaField?count=1000&aspects=structuredProperties&query=${encodeURIComponent('*')}${scrollId ? `&scrollId=${encodeURIComponent(scrollId)}` : ''}`)) as {
          entities: { urn: string; structuredProperties?: { value: { properties: Assignment[] } } }[];
          scrollId: string | null;
        };
        for (const e of page.entities) {
          if (e.urn.startsWith(prefix) && e.structuredProperties?.value.properties.length) {
            fields.push({ id: e.urn.slice(prefix.length, -1), urn: e.urn, structured_properties: keyed(e.structuredProperties.value.properties) });
          }
        }
        scrollId = page.scrollId;
      } while (scrollId);
      const model = Object.fromEntries(
        Object.entries({
          urn: opts.urn,
          name: v('datasetProperties')?.name,
          description: v('datasetProperties')?.description,
          properties: v('datasetProperties')?.customProperties,
          subtypes: v('subTypes')?.typeNames,
          structured_properties: v('structuredProperties') ? keyed(v('structuredProperties').properties) : undefined,
          schema: schemaOf(v('schemaMetadata'), fields),
          upstreams: v('upstreamLineage') ? (v('upstreamLineage').upstreams as { dataset: string }[]).map((u) => u.dataset) : undefined,
        }).filter(([, x]) => x !== undefined),
      );
      const finish = (text: string) => doubles.write(text);
      if (opts.toFile) {
        writeTextFile(opts.toFile, finish(stringify(model)));
        out.line(`Dataset yaml written to ${opts.toFile}`);
      } else out.line(finish(JSON.stringify(model, null, 2)));
      out.result(model, finish);
    }));
  return new Command('dataset').description('Datasets and their structured properties').addCommand(upsert).addCommand(get);
}
