/**
 * Query validation with graphql-js' rules, reported as Besu's graphql-java reports it:
 * `Validation error (<type>@[<field path>]) : <text>`, classification `ValidationError`.
 *
 * Each graphql-js rule runs as it is; what it reports is rewritten into graphql-java's type and
 * text, with the path of fields at the point of the report. Argument values are the exception:
 * graphql-java checks them its own way (`ArgumentsOfCorrectType`: the first bad leaf, named by its
 * path inside the argument, with the scalar's own reason), so that check replaces graphql-js'
 * ValuesOfCorrectTypeRule.
 */
import {
  ExecutableDefinitionsRule,
  FieldsOnCorrectTypeRule,
  FragmentsOnCompositeTypesRule,
  GraphQLError,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  KnownArgumentNamesRule,
  KnownDirectivesRule,
  KnownFragmentNamesRule,
  KnownTypeNamesRule,
  LoneAnonymousOperationRule,
  NoFragmentCyclesRule,
  NoUndefinedVariablesRule,
  NoUnusedFragmentsRule,
  NoUnusedVariablesRule,
  OverlappingFieldsCanBeMergedRule,
  PossibleFragmentSpreadsRule,
  ProvidedRequiredArgumentsRule,
  ScalarLeafsRule,
  SingleFieldSubscriptionsRule,
  UniqueArgumentNamesRule,
  UniqueDirectivesPerLocationRule,
  UniqueFragmentNamesRule,
  UniqueInputFieldNamesRule,
  UniqueOperationNamesRule,
  UniqueVariableNamesRule,
  validate,
  VariablesAreInputTypesRule,
  VariablesInAllowedPositionRule,
  type ASTNode,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import { errorJson, type ErrorJson } from './errors.js';
import { javaAstText } from './java-text.js';
import { SCALARS, ScalarError } from './scalars.js';

/** A graphql-js message pattern and graphql-java's type and text for it. */
type Rewrite = readonly [pattern: RegExp, type: string, text: (match: RegExpExecArray) => string];

/** graphql-js appends suggestions (` Did you mean ...?`) that graphql-java does not give. */
const withoutSuggestion = (message: string) => message.replace(/ Did you mean .*\?$/, '');

const RULES: readonly (readonly [ValidationRule, ...Rewrite[]])[] = [
  [ExecutableDefinitionsRule, [/^The "(.+)" definition is not executable\.$/, 'NonExecutableDefinition', (m) => `Type '${m[1]}' definition is not executable`]],
  [UniqueOperationNamesRule, [/^There can be only one operation named "(.+)"\.$/, 'DuplicateOperationName', (m) => `There can be only one operation named '${m[1]}'`]],
  [LoneAnonymousOperationRule, [/^This anonymous operation must be the only defined operation\.$/, 'LoneAnonymousOperationViolation', () => 'Anonymous operation with other operations']],
  [SingleFieldSubscriptionsRule, [/.*/, 'SubscriptionMultipleRootFields', (m) => m[0]]],
  [KnownTypeNamesRule, [/^Unknown type "(.+)"\.$/, 'UnknownType', (m) => `Unknown type '${m[1]}'`]],
  [
    FragmentsOnCompositeTypesRule,
    [/^Fragment cannot condition on non composite type/, 'InlineFragmentTypeConditionInvalid', () => 'Inline fragment type condition is invalid, must be on Object/Interface/Union'],
    [/^Fragment "(.+)" cannot condition on non composite type/, 'FragmentTypeConditionInvalid', () => 'Fragment type condition is invalid, must be on Object/Interface/Union'],
  ],
  [VariablesAreInputTypesRule, [/^Variable "\$(.+)" cannot be non-input type "(.+)"\.$/, 'NonInputTypeOnVariable', (m) => `Input variable '${m[1]}' type '${m[2]}' is not an input type`]],
  [
    ScalarLeafsRule,
    [/^Field "(.+)" must not have a selection since type "(.+)" has no subfields\.$/, 'SubselectionNotAllowed', (m) => `Subselection not allowed on leaf type '${m[2]}' of field '${m[1]}'`],
    [/^Field "(.+)" of type "(.+)" must have a selection of subfields\./, 'SubselectionRequired', (m) => `Subselection required for type '${m[2]}' of field '${m[1]}'`],
  ],
  [FieldsOnCorrectTypeRule, [/^Cannot query field "(.+)" on type "(.+)"\.$/, 'FieldUndefined', (m) => `Field '${m[1]}' in type '${m[2]}' is undefined`]],
  [UniqueFragmentNamesRule, [/^There can be only one fragment named "(.+)"\.$/, 'DuplicateFragmentName', (m) => `There can be only one fragment named '${m[1]}'`]],
  [KnownFragmentNamesRule, [/^Unknown fragment "(.+)"\.$/, 'UndefinedFragment', (m) => `Undefined fragment '${m[1]}'`]],
  [NoUnusedFragmentsRule, [/^Fragment "(.+)" is never used\.$/, 'UnusedFragment', (m) => `Unused fragment '${m[1]}'`]],
  [
    PossibleFragmentSpreadsRule,
    [
      /^Fragment "(.+)" cannot be spread here as objects of type "(.+)" can never be of type "(.+)"\.$/,
      'InvalidFragmentType',
      (m) => `Fragment '${m[1]}' cannot be spread here as objects of type '${m[2]}' can never be of type '${m[3]}'`,
    ],
    [
      /^Fragment cannot be spread here as objects of type "(.+)" can never be of type "(.+)"\.$/,
      'InvalidFragmentType',
      (m) => `Fragment cannot be spread here as objects of type '${m[1]}' can never be of type '${m[2]}'`,
    ],
  ],
  [NoFragmentCyclesRule, [/^Cannot spread fragment/, 'FragmentCycle', () => 'Fragment cycles not allowed']],
  [UniqueVariableNamesRule, [/^There can be only one variable named "\$(.+)"\.$/, 'DuplicateVariableName', (m) => `There can be only one variable named '${m[1]}'`]],
  [NoUndefinedVariablesRule, [/^Variable "\$(.+?)" is not defined/, 'UndefinedVariable', (m) => `Undefined variable '${m[1]}'`]],
  [NoUnusedVariablesRule, [/^Variable "\$(.+?)" is never used/, 'UnusedVariable', (m) => `Unused variable '${m[1]}'`]],
  [
    KnownDirectivesRule,
    [/^Unknown directive "@(.+)"\.$/, 'UnknownDirective', (m) => `Unknown directive '${m[1]}'`],
    [/^Directive "@(.+)" may not be used on/, 'MisplacedDirective', (m) => `Directive '${m[1]}' not allowed here`],
  ],
  [
    UniqueDirectivesPerLocationRule,
    [
      /^The directive "@(.+)" can only be used once at this location\.$/,
      'DuplicateDirectiveName',
      (m) => `Non repeatable directives must be uniquely named within a location. The directive '${m[1]}' used on a 'Field' is not repeatable`,
    ],
  ],
  [
    KnownArgumentNamesRule,
    [/^Unknown argument "(.+)" on field/, 'UnknownArgument', (m) => `Unknown field argument '${m[1]}'`],
    [/^Unknown argument "(.+)" on directive/, 'UnknownDirective', (m) => `Unknown directive argument '${m[1]}'`],
  ],
  [UniqueArgumentNamesRule, [/^There can be only one argument named "(.+)"\.$/, 'DuplicateArgumentNames', (m) => `There can be only one argument named '${m[1]}'`]],
  [
    ProvidedRequiredArgumentsRule,
    [/^Field "(.+)" argument "(.+)" of type "(.+)" is required/, 'MissingFieldArgument', (m) => `Missing field argument '${m[2]}'`],
    [/^Directive "@(.+)" argument "(.+)" of type "(.+)" is required/, 'MissingDirectiveArgument', (m) => `Missing directive argument '${m[2]}'`],
  ],
  [
    VariablesInAllowedPositionRule,
    [
      /^Variable "\$(.+)" of type "(.+)" used in position expecting type "(.+)"\.$/,
      'VariableTypeMismatch',
      (m) => `Variable '${m[1]}' of type '${m[2]}' used in position expecting type '${m[3]}'`,
    ],
  ],
  [OverlappingFieldsCanBeMergedRule, [/.*/, 'FieldsConflict', (m) => m[0]]],
  [UniqueInputFieldNamesRule, [/^There can be only one input field named "(.+)"\.$/, 'DuplicateInputField', (m) => `There can be only one input field named '${m[1]}'`]],
];

function validationMessage(type: string, path: readonly string[], text: string): string {
  return `Validation error (${type}${path.length === 0 ? '' : `@[${path.join('/')}]`}) : ${text}`;
}

function locationsOf(nodes: readonly ASTNode[] | undefined): { line: number; column: number }[] {
  return (nodes ?? []).flatMap((node) => {
    const loc = node.loc;
    return loc === undefined ? [] : [{ line: loc.startToken.line, column: loc.startToken.column }];
  });
}

/** Every validation error of a parsed query, in graphql-java's words; empty when it is valid. */
export function validateQuery(schema: GraphQLSchema, document: DocumentNode): ErrorJson[] {
  const found: ErrorJson[] = [];
  // The names of the fields around the node being visited: graphql-java's query path.
  const path: string[] = [];
  const report = (type: string, text: string, nodes: readonly ASTNode[] | undefined) =>
    found.push(errorJson(validationMessage(type, path, text), 'ValidationError', { locations: locationsOf(nodes) }));

  const enterFields: ValidationRule = () => ({
    OperationDefinition: () => void (path.length = 0),
    FragmentDefinition: () => void (path.length = 0),
    Field: (node) => void path.push(node.name.value),
  });
  // Last in the list, so that rules reporting as they leave a field still see it on the path.
  const leaveFields: ValidationRule = () => ({ Field: { leave: () => void path.pop() } });

  const rewritten = RULES.map(
    ([rule, ...rewrites]): ValidationRule =>
      (context) =>
        rule(
          Object.create(context, {
            reportError: {
              value: (error: GraphQLError) => {
                const message = withoutSuggestion(error.message);
                for (const [pattern, type, text] of rewrites) {
                  const match = pattern.exec(message);
                  if (match) return report(type, text(match), error.nodes);
                }
                report('ValidationError', message, error.nodes);
              },
            },
          }) as ValidationContext,
        ),
  );
  validate(schema, document, [enterFields, ...rewritten, argumentsOfCorrectType(report), leaveFields]);
  return found;
}

// ---------------------------------------------------------------------------------------------
// graphql-java's ArgumentsOfCorrectType
// ---------------------------------------------------------------------------------------------

/** Why a literal does not fit its type, and where inside the argument (`data.data`, `topics[0]`). */
interface LiteralProblem {
  /** Field names and list indexes from the argument down to `value`. */
  inside: string[];
  value: ValueNode;
  text: (argument: string, shown: string) => string;
}

function literalProblem(value: ValueNode, type: GraphQLInputType): LiteralProblem | undefined {
  if (value.kind === Kind.NULL) {
    return isNonNullType(type) ? { inside: [], value, text: (argument, shown) => `argument '${argument}' with value '${shown}' must not be null` } : undefined;
  }
  if (value.kind === Kind.VARIABLE) return undefined;
  if (isNonNullType(type)) return literalProblem(value, type.ofType);
  if (isScalarType(type)) {
    const scalar = SCALARS[type.name];
    try {
      if (scalar !== undefined) scalar.parseLiteral(value);
      else if (type.parseLiteral(value) === undefined) throw new ScalarError('');
    } catch (err) {
      const reason = err instanceof ScalarError && err.message !== '' ? ` - ${err.message}` : '';
      return { inside: [], value, text: (argument, shown) => `argument '${argument}' with value '${shown}' is not a valid '${type.name}'${reason}` };
    }
    return undefined;
  }
  if (isEnumType(type)) {
    const known = value.kind === Kind.ENUM && type.getValue(value.value) !== undefined;
    return known ? undefined : { inside: [], value, text: (argument, shown) => `argument '${argument}' with value '${shown}' is not a valid '${type.name}'` };
  }
  if (isListType(type)) {
    if (value.kind !== Kind.LIST) return literalProblem(value, type.ofType);
    for (const [index, item] of value.values.entries()) {
      const problem = literalProblem(item, type.ofType);
      if (problem) return { ...problem, inside: [`[${index}]`, ...problem.inside] };
    }
    return undefined;
  }
  if (!isInputObjectType(type)) return undefined;
  if (value.kind !== Kind.OBJECT) return { inside: [], value, text: (argument, shown) => `argument '${argument}' with value '${shown}' must be an object type` };
  const given = new Set(value.fields.map((field) => field.name.value));
  const missing = Object.values(type.getFields())
    .filter((field) => isNonNullType(field.type) && field.defaultValue === undefined && !given.has(field.name))
    .map((field) => field.name);
  if (missing.length > 0) {
    return { inside: [], value, text: (argument, shown) => `argument '${argument}' with value '${shown}' is missing required fields '[${missing.join(', ')}]'` };
  }
  for (const field of value.fields) {
    const definition = type.getFields()[field.name.value];
    if (definition === undefined) {
      return { inside: [], value, text: (argument, shown) => `argument '${argument}' with value '${shown}' contains a field not in '${type.name}': '${field.name.value}'` };
    }
    const problem = literalProblem(field.value, definition.type);
    if (problem) return { ...problem, inside: [field.name.value, ...problem.inside] };
  }
  return undefined;
}

function argumentsOfCorrectType(report: (type: string, text: string, nodes: readonly ASTNode[]) => void): ValidationRule {
  return (context) => ({
    Argument(node) {
      const definition = context.getArgument();
      if (!definition) return;
      const problem = literalProblem(node.value, definition.type);
      if (!problem) return;
      const name = problem.inside.reduce((text, part) => (part.startsWith('[') ? `${text}${part}` : `${text}.${part}`), node.name.value);
      report('WrongType', problem.text(name, javaAstText(problem.value)), [node]);
    },
    VariableDefinition(node) {
      const type = context.getInputType();
      if (node.defaultValue === undefined || !type || !literalProblem(node.defaultValue, type)) return;
      report('BadValueForDefaultArg', `Bad default value '${javaAstText(node.defaultValue)}' for type '${String(type)}'`, [node]);
    },
  });
}
