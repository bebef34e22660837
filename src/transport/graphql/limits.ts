/**
 * How much a query asks for, measured before it runs, as Besu measures it (graphql-java's
 * MaxQueryComplexityInstrumentation with Besu's field costs; rpc-auth-cli.md §10.1): every field
 * selected counts 1, fragments counted where they are spread, `@skip`/`@include` honoured;
 * `Transaction.block` and `__Type.fields` count 100, since each can multiply the rest of the query.
 * Depth is the longest chain of nested fields (graphql-java's MaxQueryDepthInstrumentation).
 */
import {
  getNamedType,
  isCompositeType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** Besu's default (`GraphQLConfiguration`): no CLI option changes it in Besu. */
export const BESU_MAX_QUERY_COMPLEXITY = 200;

/** Fields whose cost is 100 instead of 1: `Type.field`. */
const EXPENSIVE_FIELDS: ReadonlySet<string> = new Set(['Transaction.block', '__Type.fields']);
const EXPENSIVE_FIELD_COST = 100;

export interface QueryMeasure {
  complexity: number;
  depth: number;
}

function fieldDefinition(schema: GraphQLSchema, parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === '__typename') return TypeNameMetaFieldDef;
  if (parent === schema.getQueryType()) {
    if (name === '__schema') return SchemaMetaFieldDef;
    if (name === '__type') return TypeMetaFieldDef;
  }
  return 'getFields' in parent ? parent.getFields()[name] : undefined;
}

/** Whether `@skip`/`@include` keep a selection (variables already coerced). */
function included(directives: readonly DirectiveNode[] | undefined, variables: Readonly<Record<string, unknown>>): boolean {
  for (const directive of directives ?? []) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const argument = directive.arguments?.find((arg) => arg.name.value === 'if');
    if (argument === undefined) continue;
    const value = argument.value.kind === Kind.VARIABLE ? variables[argument.value.name.value] : argument.value.kind === Kind.BOOLEAN ? argument.value.value : undefined;
    if (name === 'skip' && value === true) return false;
    if (name === 'include' && value === false) return false;
  }
  return true;
}

/**
 * The complexity and depth of one operation of a validated document. Fragment cycles are refused by
 * validation, so expanding spreads terminates.
 */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>>,
): QueryMeasure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);

  const measure = (selections: SelectionSetNode, parent: GraphQLCompositeType, depth: number): QueryMeasure => {
    let complexity = 0;
    let deepest = depth;
    const add = (inner: QueryMeasure) => {
      complexity += inner.complexity;
      if (inner.depth > deepest) deepest = inner.depth;
    };
    for (const selection of selections.selections) {
      if (!included(selection.directives, variables)) continue;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const definition = fieldDefinition(schema, parent, name);
        complexity += EXPENSIVE_FIELDS.has(`${parent.name}.${name}`) ? EXPENSIVE_FIELD_COST : 1;
        if (depth + 1 > deepest) deepest = depth + 1;
        const type = definition === undefined ? undefined : getNamedType(definition.type);
        if (selection.selectionSet !== undefined && type !== undefined && isCompositeType(type)) add(measure(selection.selectionSet, type, depth + 1));
      } else {
        const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
        if (fragment === undefined) continue;
        const condition = fragment.typeCondition === undefined ? parent : schema.getType(fragment.typeCondition.name.value);
        if (condition !== undefined && isCompositeType(condition)) add(measure(fragment.selectionSet, condition, depth));
      }
    }
    return { complexity, depth: deepest };
  };

  const root = operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  return root ? measure(operation.selectionSet, root, 0) : { complexity: 0, depth: 0 };
}
