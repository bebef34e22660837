/**
 * The metric categories `--metrics-category` names: Besu's (its `BesuMetricCategory` and the standard
 * `JVM` and `PROCESS`), so that a Besu command line or config file works unchanged, and Basalt's
 * `CONSENSUS` (QBFT height and round, which Besu does not publish). Every category is on by default,
 * as in Besu. A category names a family of metrics whatever produces them; those Basalt has nothing
 * for (RocksDB statistics, pruning, permissioning, stratum...) are accepted and serve nothing.
 *
 * Besu names each metric `besu_<category>_<name>`, except in its `ethereum` category (`ethereum_<name>`)
 * and in the standard ones, which keep their client library's names: here `process_*` for PROCESS, and
 * for JVM the Node.js runtime's `nodejs_*` (heap, garbage collection, event loop of the main thread).
 */
export const METRIC_CATEGORIES = [
  'BLOCKCHAIN',
  'ETHEREUM',
  'EXECUTORS',
  'NETWORK',
  'PEERS',
  'PERMISSIONING',
  'KVSTORE_ROCKSDB',
  'KVSTORE_PRIVATE_ROCKSDB',
  'KVSTORE_ROCKSDB_STATS',
  'KVSTORE_PRIVATE_ROCKSDB_STATS',
  'PRUNER',
  'RPC',
  'SYNCHRONIZER',
  'TRANSACTION_POOL',
  'STRATUM',
  'BLOCK_PROCESSING',
  'JVM',
  'PROCESS',
  'CONSENSUS',
] as const;

export type MetricCategory = (typeof METRIC_CATEGORIES)[number];

export function isMetricCategory(name: string): name is MetricCategory {
  return (METRIC_CATEGORIES as readonly string[]).includes(name);
}
