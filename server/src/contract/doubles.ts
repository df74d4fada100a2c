/**
 * How svc writes a double: the `double` branch of a typed value in every JSON response, a number
 * facet's value, a value in a message, a value the CLI prints. One function, so every surface writes
 * the same text. A double always carries a decimal point, on every read, as DataHub's do (numbers
 * come back as decimals): where JSON would write an integer, `.0` is added; where it would write an exponent (from
 * 1e21, and below 1e-6), the exponent is written in Java's form (`1.0E21`, `1.5E-7`); and negative
 * zero keeps its sign. Other numbers are written as JSON writes them (`0.5`, `12345678.9`): Java would
 * switch to an exponent sooner (from 1e7, below 1e-3), so DataHub writes `2.0240614E7` where svc
 * writes `20240614.0`, the same number.
 *
 *   doubleText(60) → '60.0'; doubleText(1e21) → '1.0E21'; doubleText(1e-7) → '1.0E-7'; doubleText(-0) → '-0.0'
 */
export function doubleText(n: number): string {
  if (Object.is(n, -0)) return '-0.0';
  const s = String(n); // shortest round-trip digits, as JSON writes them; NaN and Infinity as Java does
  if (!Number.isFinite(n)) return s;
  const e = s.indexOf('e');
  if (e < 0) return s.includes('.') ? s : `${s}.0`;
  const mantissa = s.slice(0, e);
  const exponent = s.slice(e + 1);
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${exponent.startsWith('+') ? exponent.slice(1) : exponent}`;
}
