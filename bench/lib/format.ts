/** Console output helpers shared by the benchmark scripts. */

export function fixed(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

export function rate(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : Number.NaN;
}

export function megabytes(kilobytes: number | undefined): string {
  return kilobytes === undefined ? 'n/a' : `${(kilobytes / 1024).toFixed(0)} MB`;
}

/** Prints rows under a header with left-aligned first column and right-aligned figures. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

export function log(message: string): void {
  const time = new Date().toISOString().slice(11, 23);
  console.log(`[${time}] ${message}`);
}
