/**
 * What an object copy with extra fields costs in this Node's V8, the way the hot paths write it
 * (src/shared/util/with-fields.ts): a literal with properties after a spread, `Object.assign` (as
 * `withFields`), a literal with the spread last, and two spreads. Sources of three, five and twelve
 * properties (an EVM frame result, a call object, a header's JSON). Prints ns per object.
 *
 *   npm run build && node dist/bench/object-spread.js [--objects=300000]
 */
import { withFields } from '../src/shared/util/with-fields.js';
import { parseFlags } from './lib/args.js';
import { fixed, printTable } from './lib/format.js';

const flags = parseFlags('dist/bench/object-spread.js', {
  objects: { default: 300_000, min: 1000, description: 'objects made per form and source (after as many for warm-up)' },
});

function propertiesByAssignment(count: number): Record<string, number> {
  const made: Record<string, number> = {};
  for (let i = 0; i < count; i++) made[`p${i}`] = i;
  return made;
}

const sources: Array<[string, object]> = [
  ['3 fields (frame result)', { logs: [], returnValue: undefined, selfdestruct: new Map() }],
  ['5 fields (literal)', { a: 1, b: 2, c: 3, d: 4, e: 5 }],
  ['12 fields (assigned)', propertiesByAssignment(12)],
];
const extra = { x: 1 };
const forms: Array<[string, (source: object) => object]> = [
  ['{ ...source, x, y }', (source) => ({ ...source, x: 1, y: 2 })],
  ['withFields(source, { x, y })', (source) => withFields(source, { x: 1, y: 2 })],
  ['{ x, y, ...source }', (source) => ({ x: 1, y: 2, ...source })],
  ['{ ...source, ...extra }', (source) => ({ ...source, ...extra })],
];

let sink: object | undefined;
const rows: string[][] = [];
for (const [formName, make] of forms) {
  const row = [formName];
  for (const [, source] of sources) {
    for (let i = 0; i < flags.objects; i++) sink = make(source);
    const started = process.hrtime.bigint();
    for (let i = 0; i < flags.objects; i++) sink = make(source);
    row.push(fixed(Number(process.hrtime.bigint() - started) / flags.objects, 0));
  }
  rows.push(row);
}
if (sink === undefined) throw new Error('nothing made');
console.log(`ns per object, Node ${process.versions.node} (V8 ${process.versions.v8})`);
printTable(['form', ...sources.map(([name]) => name)], rows);
