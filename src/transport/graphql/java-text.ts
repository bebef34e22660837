/**
 * How graphql-java prints query values in its error messages (the `toString()` of its AST nodes),
 * e.g. `StringValue{value='0x12'}`: Besu's error texts embed them and clients see them verbatim.
 */
import { Kind, type ValueNode } from 'graphql';

export function javaAstText(node: ValueNode): string {
  switch (node.kind) {
    case Kind.STRING:
      return `StringValue{value='${node.value}'}`;
    case Kind.INT:
      return `IntValue{value=${node.value}}`;
    case Kind.FLOAT:
      return `FloatValue{value=${node.value}}`;
    case Kind.BOOLEAN:
      return `BooleanValue{value=${String(node.value)}}`;
    case Kind.NULL:
      return 'NullValue{}';
    case Kind.ENUM:
      return `EnumValue{name='${node.value}'}`;
    case Kind.VARIABLE:
      return `VariableReference{name='${node.name.value}'}`;
    case Kind.LIST:
      return `ArrayValue{values=[${node.values.map(javaAstText).join(', ')}]}`;
    case Kind.OBJECT:
      return `ObjectValue{objectFields=[${node.fields.map((field) => `ObjectField{name='${field.name.value}', value=${javaAstText(field.value)}}`).join(', ')}]}`;
  }
}
