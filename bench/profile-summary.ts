/**
 * Summarises V8 .cpuprofile files (from `--cpu-prof`, one per thread): where each thread spent its
 * samples, by function and by source file / package. A reading aid for the benchmarks' figures.
 *
 *   node dist/bench/profile-summary.js [--top=25] FILE.cpuprofile...
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Self time (µs) per profile node id, from the sample deltas. */
export function selfTimeByNode(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // Each delta is the time before its sample; attribute it to the sample it precedes.
  for (let i = 0; i < samples.length; i++) self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + (deltas[i] ?? 0));
  return self;
}

/** A readable location: the npm package, or the file under dist/, or a V8 pseudo-frame. */
export function locationOf(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return `(${frame.functionName || 'anonymous'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const dist = /\/dist\/(.*)$/.exec(url);
  if (dist) return dist[1]!;
  if (url.startsWith('node:')) return url;
  return basename(url);
}

function top(map: Map<string, number>, total: number, count: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, us]) => `  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
}

function summarise(file: string, topCount: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const self = selfTimeByNode(profile);
  const byFunction = new Map<string, number>();
  const byLocation = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    total += us;
    const { functionName, lineNumber } = node.callFrame;
    if (functionName === '(idle)') idle += us;
    const location = locationOf(node.callFrame);
    const fn = `${functionName || '(anonymous)'} ${location}${node.callFrame.url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byLocation.set(location, (byLocation.get(location) ?? 0) + us);
  }
  console.log(`\n### ${basename(file)}: ${(total / 1e6).toFixed(1)} s sampled, ${((1 - idle / total) * 100).toFixed(0)}% busy`);
  console.log('by file or package (self time):');
  console.log(top(byLocation, total, topCount).join('\n'));
  console.log('by function (self time):');
  console.log(top(byFunction, total, topCount).join('\n'));
}

const args = process.argv.slice(2);
const topFlag = args.find((a) => a.startsWith('--top='));
const topCount = topFlag ? Number(topFlag.slice(6)) : 25;
const files = args.filter((a) => !a.startsWith('--'));
if (files.length === 0) {
  console.error('usage: node dist/bench/profile-summary.js [--top=25] FILE.cpuprofile...');
  process.exit(2);
}
for (const file of files) summarise(file, topCount);
