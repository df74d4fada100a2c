/**
 * JSON Schema validation of everything svc takes in (aspect values, request bodies), with one ajv
 * instance and one way of describing a violation: `<label>.<path>: <what was expected>`. A schema may
 * carry ajv-errors' `errorMessage` for a friendlier message than ajv's own (the OpenAPI document
 * shows the schemas as they are: the message is what a caller gets).
 *
 *   const check = compileSchema({ type: 'object', properties: { n: { type: 'integer' } } }, 'body');
 *   check({ n: 'x' }); // ['body.n: must be integer']
 */
import { Ajv, type ErrorObject } from 'ajv';
import ajvErrors from 'ajv-errors';

const ajv = new Ajv({ allErrors: true, strict: true });
// ajv-errors is CommonJS: its function is the module's `default` export.
ajvErrors.default(ajv);

/**
 * Compiles `schema`; the validator returns every violation of a value, each starting with where it is
 * (`label`, or the one given to the call, then the path); empty when the value is valid.
 */
export function compileSchema(schema: Record<string, unknown>, label: string): (value: unknown, as?: string) => string[] {
  const fn = ajv.compile(schema);
  return (value, as = label) => (fn(value) ? [] : (fn.errors ?? []).filter((e) => e.keyword !== 'if').map((e) => describe(as, e)));
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
