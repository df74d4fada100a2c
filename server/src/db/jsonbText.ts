/**
 * The text Postgres gives for a value stored as `jsonb` (`value::jsonb::text`), computed here: what a
 * checked write compares (see aspectStore.ts) includes the stored system metadata as that text, so a
 * writer that knows what it wrote can name the row without reading it back.
 *
 * Postgres' form: object keys in order of length, then of their UTF-8 bytes; `": "` after a key and
 * `", "` between members; strings escaped as JSON.stringify escapes them (for the strings Postgres
 * stores at all); numbers as `numeric` prints them. For a number JavaScript prints with an exponent
 * (`1e-7`, `1e+21`), or one that is not finite, the text is not computed: undefined, and the caller
 * reads the row instead.
 */
export function jsonbText(value: unknown): string | undefined {
  const out: string[] = [];
  return write(value, out) ? out.join('') : undefined;
}

function write(v: unknown, out: string[]): boolean {
  if (v === null) out.push('null');
  else if (typeof v === 'string') out.push(JSON.stringify(v));
  else if (typeof v === 'boolean') out.push(v ? 'true' : 'false');
  else if (typeof v === 'number') {
    const text = JSON.stringify(v);
    if (!Number.isFinite(v) || text.includes('e')) return false;
    out.push(text);
  } else if (Array.isArray(v)) {
    out.push('[');
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.push(', ');
      // JSON.stringify writes undefined members of an array as null.
      if (!write(v[i] === undefined ? null : v[i], out)) return false;
    }
    out.push(']');
  } else if (typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
    // As JSON.stringify sends it: members whose value is undefined are left out.
    const keys = Object.keys(v as object).filter((k) => (v as Record<string, unknown>)[k] !== undefined);
    keys.sort(byJsonbOrder);
    out.push('{');
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) out.push(', ');
      out.push(JSON.stringify(keys[i]), ': ');
      if (!write((v as Record<string, unknown>)[keys[i]!], out)) return false;
    }
    out.push('}');
  } else return false; // undefined, functions, and objects JSON.stringify sends by their toJSON

  return true;
}

function byJsonbOrder(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length - y.length || Buffer.compare(x, y);
}
