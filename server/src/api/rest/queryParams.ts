/**
 * The query parameters of a REST route, declared once: {@link queryParams} turns the declaration into
 * the parser of the route (a malformed value or an unknown name is a 400 saying what was expected;
 * every problem is reported at once) and into the route's parameters in the OpenAPI document.
 *
 *   const listQuery = queryParams({ count: { type: 'integer', default: 10, minimum: 1, description: 'Page size' } });
 *   const { count } = listQuery.parse(req); // GET ?count=abc → 400 "query parameter count: expected an integer …"
 */
import type { Request } from 'express';
import { Violations } from '../../shared/errors.ts';
import { quoted } from '../pathGuard.ts';

/**
 * `required`: the route refuses a request without it. Its route checks that, with the message its
 * caller knows (DataHub's, where there is one); here it only marks the parameter in the document.
 */
export type ParamSpec = (
  | { type: 'boolean'; default: boolean; description: string }
  | { type: 'integer'; default?: number; minimum: number; description: string }
  | { type: 'string'; default?: string; description: string }
  | { type: 'enum'; values: readonly string[]; default?: string; description: string }
  /** Repeatable, and each value may list several, comma-separated (`aspects=status,datasetKey`). */
  | { type: 'list'; aliases?: readonly string[]; description: string }
  /** Taken (also repeated) and not read here: a parameter DataHub clients send that has no effect, or one the route reads from the raw query. */
  | { type: 'ignored'; description: string }
) & { required?: true };

type Specs = Record<string, ParamSpec>;

type ValueOf<P extends ParamSpec> = P extends { type: 'boolean' }
  ? boolean
  : P extends { type: 'integer'; default: number }
    ? number
    : P extends { type: 'integer' }
      ? number | undefined
      : P extends { type: 'enum'; values: readonly (infer V)[]; default: string }
        ? V
        : P extends { type: 'enum'; values: readonly (infer V)[] }
          ? V | undefined
          : P extends { type: 'list' }
            ? string[] | undefined
            : P extends { type: 'string' }
              ? string | undefined
              : undefined;

export type QueryValues<S extends Specs> = { [K in keyof S]: ValueOf<S[K]> };

export interface QueryParams<S extends Specs> {
  readonly specs: S;
  /** The route's parameters read from `req.query`; throws one VALIDATION error listing every problem. */
  parse(req: Request): QueryValues<S>;
  /** The OpenAPI parameter objects; `listItems` names the values list parameters take (e.g. aspect names). */
  openapi(listItems?: readonly string[]): Record<string, unknown>[];
}

/** The largest integer a query parameter may hold (larger ones cannot be represented exactly). */
const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

function readValue(name: string, spec: ParamSpec, values: string[], v: Violations): unknown {
  // Every value is valid text by now (queryGuard.ts).
  const at = `query parameter ${name}`;
  if (spec.type === 'list') return values.flatMap((x) => x.split(',')).map((s) => s.trim()).filter(Boolean);
  if (spec.type === 'ignored') return undefined;
  if (values.length > 1) {
    v.add(`${at}: expected one value, got ${values.length}`);
    return undefined;
  }
  const value = values[0]!;
  switch (spec.type) {
    case 'boolean':
      if (value === '') return spec.default;
      if (value === 'true' || value === 'false') return value === 'true';
      v.add(`${at}: expected true or false, got ${quoted(value)}`);
      return undefined;
    case 'integer': {
      if (value === '') return spec.default;
      const negative = spec.minimum < 0;
      const n = (negative ? /^-?[0-9]{1,16}$/ : /^[0-9]{1,16}$/).test(value) ? Number(value) : NaN;
      if (!(n >= spec.minimum && n <= MAX_INTEGER)) {
        v.add(`${at}: expected an integer >= ${spec.minimum}, got ${quoted(value)} (${negative ? 'digits, after a minus sign if negative' : 'digits only'}, at most ${MAX_INTEGER})`);
        return undefined;
      }
      return n;
    }
    case 'enum':
      if (value === '') return spec.default;
      if (spec.values.includes(value)) return value;
      v.add(`${at}: expected one of ${spec.values.join(', ')}, got ${quoted(value)}`);
      return undefined;
    case 'string':
      // An empty value reads as the default, as for the other types; without one it stays empty.
      return value === '' && spec.default !== undefined ? spec.default : value;
    default:
      return undefined;
  }
}

export function queryParams<const S extends Specs>(specs: S): QueryParams<S> {
  const names = new Map<string, string>(); // a name or alias as sent → the declared name
  for (const [name, spec] of Object.entries(specs)) {
    names.set(name, name);
    if (spec.type === 'list') for (const alias of spec.aliases ?? []) names.set(alias, name);
  }
  const allowed = [...names.keys()].join(', ') || 'none';
  const declared = Object.entries(specs);
  return {
    specs,
    parse(req: Request): QueryValues<S> {
      const query = req.query as Record<string, string | string[]>;
      const v = new Violations();
      const given = new Map<string, string[]>();
      for (const [sent, value] of Object.entries(query)) {
        const name = names.get(sent);
        if (name === undefined) {
          v.add(`unknown query parameter ${quoted(sent, 60)}; this route takes: ${allowed}`);
          continue;
        }
        given.set(name, [...(given.get(name) ?? []), ...(Array.isArray(value) ? value : [value])]);
      }
      const out: Record<string, unknown> = {};
      for (const [name, spec] of declared) {
        const values = given.get(name);
        out[name] = values === undefined ? ('default' in spec ? spec.default : undefined) : readValue(name, spec, values, v);
      }
      v.throwIfAny();
      return out as QueryValues<S>;
    },
    openapi(listItems?: readonly string[]) {
      return Object.entries(specs).flatMap(([name, spec]) => {
        const schema = schemaOf(spec, listItems);
        const aliases = spec.type === 'list' ? (spec.aliases ?? []) : [];
        return [
          { name, in: 'query', required: spec.required === true, description: spec.description, schema },
          ...aliases.map((alias) => ({ name: alias, in: 'query', required: false, description: `Another name of ${name}`, schema })),
        ];
      });
    },
  };
}

function schemaOf(spec: ParamSpec, listItems: readonly string[] | undefined): Record<string, unknown> {
  switch (spec.type) {
    case 'boolean':
      return { type: 'boolean', default: spec.default };
    case 'integer':
      return { type: 'integer', minimum: spec.minimum, maximum: MAX_INTEGER, ...(spec.default === undefined ? {} : { default: spec.default }) };
    case 'enum':
      return { type: 'string', enum: spec.values, ...(spec.default === undefined ? {} : { default: spec.default }) };
    case 'list':
      return { type: 'array', items: listItems ? { type: 'string', enum: listItems } : { type: 'string' } };
    case 'string':
      return { type: 'string', ...(spec.default === undefined ? {} : { default: spec.default }) };
    default:
      return { type: 'string' };
  }
}
