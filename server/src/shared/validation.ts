/**
 * JSON Schema validation of everything svc takes in (aspect values, request bodies), with one ajv
 * instance and one way of describing a violation: `<label>.<path>: <what was expected>`. A schema may
 * carry ajv-errors' `errorMessage` for a friendlier message than ajv's own (the OpenAPI document
 * shows the schemas as they are: the message is what a caller gets).
 *
 *   const check = compileSchema({ type: 'object', properties: { n: { type: 'integer' } } }, 'body');
 *   check({ n: 'x' }); // ['body.n: must be integer']
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvErrors from 'ajv-errors';
import { MAX_LISTED_VIOLATIONS } from './errors.ts';
import { walkObjects } from '../contract/jsonTree.ts';

// A named type DataHub's aspects share (an audit stamp, say) is compiled as a function of its own rather
// than inlined at each use: inlined, compiling DataHub's 270 aspects took three times as long.
const ajv = new Ajv({ allErrors: true, strict: true, inlineRefs: false });
// ajv-errors is CommonJS: its function is the module's `default` export.
ajvErrors.default(ajv);
/** Stops at the first violation: whether a value is valid, at the cost of reading it once. */
const firstOnly = new Ajv({ allErrors: false, strict: true, inlineRefs: false });
firstOnly.addKeyword('errorMessage');

/**
 * A value found invalid is checked again for every violation, on a sample: its lists and maps cut
 * to their first SAMPLE entries (the fields the schema names are kept). A body of a million bad
 * list items then costs what a thousand do (a full pass over it made a million error objects: 11 s
 * of CPU, most of it collecting them, while every other request waited).
 */
const SAMPLE = 1_000;

/** Every field name the schema names anywhere: a cut map keeps them (a required field is never cut away). */
function namedFields(schema: unknown, into = new Set<string>()): Set<string> {
  walkObjects(schema, (n) => {
    if (n.properties && typeof n.properties === 'object') for (const k of Object.keys(n.properties)) into.add(k);
    if (Array.isArray(n.required)) for (const k of n.required) into.add(String(k));
  });
  return into;
}

/** `value` with each list and map cut to its first SAMPLE entries (fields in `keep` kept); whether anything was cut. */
function sampled(value: unknown, keep: Set<string>): { value: unknown; cut: boolean } {
  let cut = false;
  const copy = (v: unknown, depth: number): unknown => {
    // Bodies nest at most 64 levels (inputRules.ts); a deeper value is given as it is.
    if (depth > 100 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      if (v.length > SAMPLE) cut = true;
      return v.slice(0, SAMPLE).map((x) => copy(x, depth + 1));
    }
    const out: Record<string, unknown> = {};
    let others = 0;
    for (const k of Object.keys(v)) {
      if (!keep.has(k) && others++ >= SAMPLE) {
        cut = true;
        continue;
      }
      out[k] = copy((v as Record<string, unknown>)[k], depth + 1);
    }
    return out;
  };
  return { value: copy(value, 0), cut };
}

/**
 * Compiles `schema`; the validator returns the violations of a value, each starting with where it is
 * (`label`, or the one given to the call, then the path); empty when the value is valid. At most
 * {@link MAX_LISTED_VIOLATIONS} are returned, the last saying how many more there were.
 */
export function compileSchema(schema: Record<string, unknown>, label: string): (value: unknown, as?: string) => string[] {
  const valid = firstOnly.compile(schema);
  // What lists every violation is compiled when a value first fails: most schemas never see one.
  let every: ValidateFunction | undefined;
  let keep: Set<string> | undefined;
  return (value, as = label) => {
    if (valid(value)) return [];
    every ??= ajv.compile(schema);
    keep ??= namedFields(schema);
    const fn = every;
    const sample = sampled(value, keep);
    const errors = fn(sample.value) ? [] : (fn.errors ?? []).filter((e) => e.keyword !== 'if');
    // A violation the sample does not hold (a list too long for its schema, say) is told as found.
    if (errors.length === 0 && valid.errors?.[0]) errors.push(valid.errors[0]);
    if (errors.length <= MAX_LISTED_VIOLATIONS && !sample.cut) return errors.map((e) => describe(as, e));
    const listed = errors.slice(0, MAX_LISTED_VIOLATIONS - 1).map((e) => describe(as, e));
    const more = errors.length - listed.length;
    const counted = sample.cut ? `${more.toLocaleString('en-US')} or more (lists and maps were checked in their first ${SAMPLE.toLocaleString('en-US')} entries)` : more.toLocaleString('en-US');
    listed.push(`${as || 'body'}: … and ${counted} more problems`);
    return listed;
  };
}

function describe(label: string, e: ErrorObject): string {
  const path = e.instancePath.replace(/\//g, '.');
  const at = label ? `${label}${path}` : path.slice(1) || 'body';
  switch (e.keyword) {
    case 'additionalProperties':
      return `${at}: unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    case 'required':
      return `${at}: missing required field "${(e.params as { missingProperty: string }).missingProperty}"`;
    case 'enum':
      return `${at}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'minimum':
    case 'maximum':
      return `${at}: ${e.message ?? 'is out of range'} (an integer field holds at most ±9007199254740991)`;
    default:
      return `${at}: ${e.message ?? 'is invalid'}`;
  }
}
