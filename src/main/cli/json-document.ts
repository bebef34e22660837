// A JSON document read and written back without changing what it says: numbers keep the digits they were
// written with (a genesis balance of 90000000000000000000000 is beyond a JavaScript number) and object
// members keep their order. Written back in the layout of Jackson's default pretty printer, which is what
// Besu writes a genesis file with (`operator generate-blockchain-config`): two-space indentation,
// `"key" : value`, arrays on one line as `[ a, b ]`, empty containers as `{ }` and `[ ]`, no final newline.

export type JsonValue =
  | { readonly kind: 'object'; readonly members: JsonMember[] }
  | { readonly kind: 'array'; readonly items: JsonValue[] }
  | { readonly kind: 'string'; readonly value: string }
  /** The number as written. */
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'literal'; readonly value: boolean | null };

export interface JsonMember {
  readonly key: string;
  value: JsonValue;
}

export class JsonSyntaxError extends Error {}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

/** Parses `text` (one JSON value, whitespace around it allowed); JsonSyntaxError names the offset. */
export function parseJsonDocument(text: string): JsonValue {
  let at = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(at >= text.length ? `unexpected end of input, expected ${what}` : `unexpected character '${text[at]}' at offset ${at}, expected ${what}`);
  };
  const skipWhitespace = (): void => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const token = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (match === null) return undefined;
    at = pattern.lastIndex;
    return match[0];
  };
  const expect = (char: string): void => {
    skipWhitespace();
    if (text[at] !== char) fail(`'${char}'`);
    at++;
  };
  const string = (): string => {
    const quoted = token(STRING);
    return quoted === undefined ? fail('a string') : (JSON.parse(quoted) as string);
  };
  // Nesting is bounded by the call stack: a config file deep enough to exhaust it is not a genesis.
  const value = (): JsonValue => {
    skipWhitespace();
    const char = text[at];
    if (char === '{') {
      at++;
      const members: JsonMember[] = [];
      skipWhitespace();
      if (text[at] === '}') {
        at++;
        return { kind: 'object', members };
      }
      for (;;) {
        skipWhitespace();
        const key = string();
        expect(':');
        const member = value();
        // As Jackson: a repeated key takes the later value in the earlier place.
        const earlier = members.find((m) => m.key === key);
        if (earlier === undefined) members.push({ key, value: member });
        else earlier.value = member;
        skipWhitespace();
        if (text[at] === ',') at++;
        else if (text[at] === '}') {
          at++;
          return { kind: 'object', members };
        } else fail("',' or '}'");
      }
    }
    if (char === '[') {
      at++;
      const items: JsonValue[] = [];
      skipWhitespace();
      if (text[at] === ']') {
        at++;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(value());
        skipWhitespace();
        if (text[at] === ',') at++;
        else if (text[at] === ']') {
          at++;
          return { kind: 'array', items };
        } else fail("',' or ']'");
      }
    }
    if (char === '"') return { kind: 'string', value: string() };
    for (const [word, literal] of [['true', true], ['false', false], ['null', null]] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return { kind: 'literal', value: literal };
      }
    }
    const number = token(NUMBER);
    return number === undefined ? fail('a value') : { kind: 'number', text: number };
  };
  const document = value();
  skipWhitespace();
  if (at < text.length) fail('the end of the document');
  return document;
}

/** Jackson's DefaultPrettyPrinter layout (see above). */
export function formatJsonDocument(value: JsonValue, indent = ''): string {
  switch (value.kind) {
    case 'object': {
      if (value.members.length === 0) return '{ }';
      const inner = `${indent}  `;
      const members = value.members.map((m) => `${inner}${JSON.stringify(m.key)} : ${formatJsonDocument(m.value, inner)}`);
      return `{\n${members.join(',\n')}\n${indent}}`;
    }
    case 'array':
      return value.items.length === 0 ? '[ ]' : `[ ${value.items.map((item) => formatJsonDocument(item, indent)).join(', ')} ]`;
    case 'string':
      return JSON.stringify(value.value);
    case 'number':
      return value.text;
    case 'literal':
      return String(value.value);
  }
}

/** The member of `object` named `key`, ignoring case as Besu reads genesis keys; undefined when absent. */
export function memberOf(object: JsonValue, key: string): JsonMember | undefined {
  if (object.kind !== 'object') return undefined;
  const lower = key.toLowerCase();
  return object.members.find((m) => m.key.toLowerCase() === lower);
}

/** Jackson's names of the node types, as Besu's messages print them. */
export function jsonTypeName(value: JsonValue): string {
  switch (value.kind) {
    case 'object':
      return 'OBJECT';
    case 'array':
      return 'ARRAY';
    case 'string':
      return 'STRING';
    case 'number':
      return 'NUMBER';
    case 'literal':
      return value.value === null ? 'NULL' : 'BOOLEAN';
  }
}
