/**
 * Exact sums and differences of the decimal texts PostgreSQL returns for numeric sums
 * (`"4410.50"`, `"-3"`), so "sums moved" never drift by a float rounding: `0.1 + 0.2` stays
 * `0.3`. A text that is not a plain decimal (a float's `1.5e+20`, `NaN`) falls back to Number.
 */

interface Fixed {
  units: bigint;
  scale: number;
}

const PLAIN = /^([+-]?)(\d+)(?:\.(\d+))?$/;

function parse(text: string): Fixed | undefined {
  const m = PLAIN.exec(text.trim());
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  const units = BigInt(`${m[2] ?? '0'}${fraction}`);
  return { units: m[1] === '-' ? -units : units, scale: fraction.length };
}

function rescale(f: Fixed, scale: number): bigint {
  return f.units * 10n ** BigInt(scale - f.scale);
}

function format(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

type Value = string | number | null | undefined;

const asText = (v: Value): string => (v === null || v === undefined || v === '' ? '0' : String(v));

function combine(a: Value, b: Value, sign: 1n | -1n): string {
  const [x, y] = [parse(asText(a)), parse(asText(b))];
  if (!x || !y) {
    const n = Number(asText(a)) + Number(sign) * Number(asText(b));
    return String(Math.round(n * 1e9) / 1e9);
  }
  const scale = Math.max(x.scale, y.scale);
  return format(rescale(x, scale) + sign * rescale(y, scale), scale);
}

/** a + b, exactly for decimal texts; null and '' count as 0. */
export function addDecimal(a: Value, b: Value): string {
  return combine(a, b, 1n);
}

/** a − b, exactly for decimal texts; null and '' count as 0. */
export function subDecimal(a: Value, b: Value): string {
  return combine(a, b, -1n);
}

/** |a| */
export function absDecimal(a: Value): string {
  const text = asText(a).trim();
  return text.startsWith('-') ? text.slice(1) : text.replace(/^\+/, '');
}

/** Whether a decimal text (or number) is zero. */
export function isZeroDecimal(a: Value): boolean {
  const f = parse(asText(a));
  return f ? f.units === 0n : Number(asText(a)) === 0;
}

/** Sum of many decimal texts. */
export function sumDecimals(values: Iterable<Value>): string {
  let total = '0';
  for (const v of values) total = addDecimal(total, v);
  return total;
}

/** Compares |a| and |b| (for ordering by size): negative, 0 or positive. */
export function compareAbsDecimal(a: Value, b: Value): number {
  const d = subDecimal(absDecimal(a), absDecimal(b));
  return isZeroDecimal(d) ? 0 : d.startsWith('-') ? -1 : 1;
}
