/**
 * bench/lib/perf-threads.ts: `perf script` output read as samples per thread, each classified by
 * what its stack shows (frames as perf prints them for a node process).
 */
import test from 'ava';
import { classifyStack, describeThreadSamples, samplesByThread } from '../../bench/lib/perf-threads.js';

const SCRIPT = `chain 1201 
\t          f3ee7e v8::internal::JSObject::MigrateToMap (/usr/bin/node)
\t         155e476 Builtins_CEntry_Return1_ArgvOnStack_NoBuiltinExit (/usr/bin/node)
\t    7f794c07278d [unknown] (/tmp/perf-19632.map)

node 1188 
\t         1a2b3c4 v8::internal::compiler::GraphReducer::ReduceTop (/usr/bin/node)
\t         1a2b3c5 v8::internal::compiler::PipelineImpl::OptimizeGraph (/usr/bin/node)
\t         1a2b3c6 v8::platform::DefaultWorkerThreadsTaskRunner::WorkerThread::Run (/usr/bin/node)

node 1189 
\t          c0ffee v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot> (/usr/bin/node)
\t          c0fff0 v8::internal::ScavengerCollector::JobTask::Run (/usr/bin/node)

node 1190 
\t          c0ffee v8::internal::compiler::NodeProperties::HashCode (/usr/bin/node)

transport-1 1250 
\tffffffff813ae293 finish_task_switch.isra.0 ([kernel.kallsyms])
\tffffffff8226dbf9 schedule ([kernel.kallsyms])
\t            96721 epoll_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
`;

test('samples are counted per thread name, largest first, each by what its stack was doing', (t) => {
  const threads = samplesByThread(SCRIPT);
  t.deepEqual(
    threads.map((thread) => [thread.name, thread.samples]),
    [
      ['node', 3],
      ['chain', 1],
      ['transport-1', 1],
    ],
  );
  t.deepEqual(threads[0]!.byKind, { run: 0, compile: 2, gc: 1, kernel: 0 });
  t.deepEqual(threads[1]!.byKind, { run: 1, compile: 0, gc: 0, kernel: 0 });
  t.deepEqual(threads[2]!.byKind, { run: 0, compile: 0, gc: 0, kernel: 1 });
});

test('a stack in both a compiler and the collector counts as compiling; the kernel only at the leaf', (t) => {
  t.is(classifyStack(['v8::internal::Heap::AllocateRaw (/usr/bin/node)', 'v8::internal::compiler::Typer::Run (/usr/bin/node)']), 'compile');
  t.is(classifyStack(['memcpy (/usr/lib/libc.so.6)', 'do_syscall_64 ([kernel.kallsyms])']), 'run');
  t.is(classifyStack([]), 'run');
});

test('each thread is described by its share of all samples and the split of its own', (t) => {
  const [node] = describeThreadSamples(samplesByThread(SCRIPT));
  t.is(node, "node          60 % of the node's samples; of its own: run 0 %, compile 67 %, gc 33 %, kernel 0 %");
});
