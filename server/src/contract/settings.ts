/**
 * How svc's processes (the server, the operator) read a setting from their environment: the same
 * words for true and false, the same bounds check for a number, and one error type naming the
 * setting, which each process reports before it starts.
 */

/** A setting that cannot be used, with the setting's name and what it should be in the message. */
export class ConfigError extends Error {}

/** A boolean setting: true/1/yes or false/0/no; unset or empty is the default. */
export function bool(name: string, raw: string | undefined, dflt: boolean): boolean {
  if (raw === undefined || raw === '') return dflt;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** An integer setting within [min, max]; unset or empty is the default. */
export function int(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}
