/**
 * Besu's GraphQL schema (EIP-1767 as Besu extends it; `ethereum/api/src/main/resources/schema.graphqls`,
 * descriptions removed; rpc-auth-cli.md §10.2), built with graphql-js and given Besu's scalars and
 * Basalt's resolvers.
 */
import { buildSchema, isObjectType, isScalarType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { SCALARS } from './scalars.js';

export const SCHEMA_SDL = `
type AccessTuple { address: Address! storageKeys: [Bytes32!]! }
type Account {
  address: Address!
  balance: BigInt!
  transactionCount: Long!
  code: Bytes!
  storage(slot: Bytes32!): Bytes32!
}
scalar Address
scalar BigInt
type Block {
  number: Long!
  hash: Hash!
  parent: Block
  nonce: Bytes!
  transactionsRoot: Hash!
  transactionCount: Long
  stateRoot: Hash!
  receiptsRoot: Hash!
  miner(block: Long): Account!
  extraData: Bytes!
  gasLimit: Long!
  gasUsed: Long!
  baseFeePerGas: BigInt
  nextBaseFeePerGas: BigInt
  timestamp: Long!
  logsBloom: Bytes!
  mixHash: Hash!
  difficulty: BigInt!
  totalDifficulty: BigInt!
  ommerCount: Long
  ommers: [Block]
  ommerAt(index: Long!): Block
  ommerHash: Hash!
  transactions: [Transaction!]
  transactionAt(index: Long!): Transaction
  logs(filter: BlockFilterCriteria!): [Log!]!
  account(address: Address!): Account!
  call(data: CallData!): CallResult
  estimateGas(data: CallData!): Long!
  rawHeader: Bytes!
  raw: Bytes!
  withdrawalsRoot: Hash
  withdrawals: [Withdrawal!]
  blobGasUsed: Long
  excessBlobGas: Long
}
input BlockFilterCriteria { addresses: [Address!] topics: [[LogTopic!]!] }
scalar Bytes
scalar Bytes32
scalar Hash
scalar LogTopic
scalar VersionedHash
input CallData {
  from: Address
  to: Address
  gas: Long
  gasPrice: BigInt
  maxFeePerGas: BigInt
  maxPriorityFeePerGas: BigInt
  value: BigInt
  data: Bytes
}
type CallResult { data: Bytes! gasUsed: Long! status: Long! }
input FilterCriteria {
  fromBlock: Long
  toBlock: Long
  addresses: [Address!]
  topics: [[LogTopic!]!]
}
type Log {
  index: Long!
  account(block: Long): Account!
  topics: [LogTopic!]!
  data: Bytes!
  transaction: Transaction!
}
scalar Long
type Mutation { sendRawTransaction(data: Bytes!): Bytes32! }
type Pending {
  transactionCount: Long!
  transactions: [Transaction!]
  account(address: Address!): Account!
  call(data: CallData!): CallResult
  estimateGas(data: CallData!): Long!
}
type Query {
  block(number: Long, hash: Hash): Block
  blocks(from: Long, to: Long): [Block!]!
  pending: Pending!
  transaction(hash: Hash!): Transaction
  logs(filter: FilterCriteria!): [Log!]!
  gasPrice: BigInt!
  maxPriorityFeePerGas: BigInt!
  syncing: SyncState
  chainID: BigInt!
}
type SyncState { startingBlock: Long! currentBlock: Long! highestBlock: Long! }
type Transaction {
  hash: Hash!
  nonce: Long!
  index: Long
  from(block: Long): Account!
  to(block: Long): Account
  value: BigInt!
  gasPrice: BigInt!
  maxFeePerGas: BigInt
  maxPriorityFeePerGas: BigInt
  maxFeePerBlobGas: BigInt
  effectiveTip: BigInt
  gas: Long!
  inputData: Bytes!
  block: Block
  status: Long
  gasUsed: Long
  cumulativeGasUsed: Long
  effectiveGasPrice: BigInt
  blobGasUsed: Long
  blobGasPrice: BigInt
  createdContract(block: Long): Account
  logs: [Log!]
  r: BigInt!
  s: BigInt!
  v: BigInt
  yParity: BigInt
  type: Long
  accessList: [AccessTuple!]
  raw: Bytes!
  rawReceipt: Bytes!
  blobVersionedHashes: [VersionedHash!]
  revertReason: Bytes
}
type Withdrawal { index: Long! validator: Long! address: Address! amount: Long! }
`;

/** Resolvers by type and field; a field without one reads the source's property of its name. */
export type ResolverMap = Readonly<Record<string, Readonly<Record<string, GraphQLFieldResolver<never, never, never>>>>>;

/**
 * The schema with Besu's scalar coercions and `resolvers` attached. A resolver for a type or field
 * the schema does not have is a programming error, refused here rather than silently ignored.
 */
export function buildGraphqlSchema(resolvers: ResolverMap): GraphQLSchema {
  const schema = buildSchema(SCHEMA_SDL);
  for (const [name, implementation] of Object.entries(SCALARS)) {
    const scalar = schema.getType(name);
    if (!isScalarType(scalar)) throw new Error(`the schema has no scalar ${name}`);
    // graphql-js keeps a scalar's coercions as plain properties; buildSchema leaves them the identity.
    Object.assign(scalar, {
      serialize: implementation.serialize,
      parseValue: implementation.parseValue,
      parseLiteral: implementation.parseLiteral,
    });
  }
  for (const [typeName, fields] of Object.entries(resolvers)) {
    const type = schema.getType(typeName);
    if (!isObjectType(type)) throw new Error(`the schema has no object type ${typeName}`);
    const definitions = type.getFields();
    for (const [fieldName, resolve] of Object.entries(fields)) {
      const field = definitions[fieldName];
      if (field === undefined) throw new Error(`the schema has no field ${typeName}.${fieldName}`);
      field.resolve = resolve as GraphQLFieldResolver<unknown, unknown>;
    }
  }
  return schema;
}
