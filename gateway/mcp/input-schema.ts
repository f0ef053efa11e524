/**
 * A tool's JSON Schema input, derived from its operation's variable definitions: an agent sees
 * the same types, required-ness, defaults and allowed values the supergraph enforces.
 *
 * - `String`, `ID` → string; `Int` → integer; `Float` → number; `Boolean` → boolean;
 *   `DateTime` → string (date-time); any other custom scalar → unconstrained, with its description.
 * - an enum → string with `enum`, each value's description listed in the property's description;
 * - an input object → object with its fields (descriptions and defaults from the schema);
 * - a list → array; non-null without a default → required.
 *
 * Nullable types do not admit `null` in the schema: leaving the argument out means the same, and
 * several agent runtimes refuse schemas whose `type` is an array.
 */
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  astFromValue,
  typeFromAST,
  valueFromASTUntyped,
  type GraphQLInputType,
  type GraphQLSchema,
  type ValueNode,
  type VariableDefinitionNode,
} from "graphql";

export interface JsonSchema {
  type?: string;
  description?: string;
  enum?: string[];
  format?: string;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  default?: unknown;
}

export interface ToolInputSchema extends JsonSchema {
  type: "object";
  properties: Record<string, JsonSchema>;
}

/**
 * The object schema of an operation's variables. `descriptions` maps a variable name to what the
 * tool's header (or the argument it feeds) says about it.
 */
export function inputSchemaOf(schema: GraphQLSchema, variables: readonly VariableDefinitionNode[], descriptions: ReadonlyMap<string, string>): ToolInputSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const definition of variables) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type as never) as GraphQLInputType | undefined;
    // validate() has already refused unknown types; this only satisfies the type checker.
    if (!type) throw new Error(`variable $${name} has an unknown type`);
    const property = schemaOfType(type, new Set());
    const description = joinDescriptions(descriptions.get(name), property.description);
    properties[name] = { ...property, ...(description ? { description } : {}) };
    if (definition.defaultValue) properties[name]!.default = jsonOfValue(definition.defaultValue);
    if (type instanceof GraphQLNonNull && !definition.defaultValue) required.push(name);
  }
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

function schemaOfType(type: GraphQLInputType, enclosing: Set<string>): JsonSchema {
  if (type instanceof GraphQLNonNull) return schemaOfType(type.ofType, enclosing);
  if (type instanceof GraphQLList) return { type: "array", items: schemaOfType(type.ofType, enclosing) };
  if (type instanceof GraphQLEnumType) {
    const values = type.getValues();
    const described = values.filter((value) => value.description).map((value) => `${value.name}: ${oneLine(value.description!)}`);
    return { type: "string", enum: values.map((value) => value.name), ...(described.length > 0 ? { description: described.join("; ") } : {}) };
  }
  if (type instanceof GraphQLInputObjectType) {
    // An input type that contains itself cannot be spelled out inline; say what it is instead.
    if (enclosing.has(type.name)) return { type: "object", description: `A ${type.name} (see the schema resource).` };
    const inner = new Set(enclosing).add(type.name);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(type.getFields())) {
      const property = schemaOfType(field.type, inner);
      const description = joinDescriptions(field.description ?? undefined, property.description);
      properties[field.name] = { ...property, ...(description ? { description } : {}) };
      if (field.defaultValue !== undefined) {
        const literal = astFromValue(field.defaultValue, field.type);
        if (literal) properties[field.name]!.default = jsonOfValue(literal);
      }
      if (field.type instanceof GraphQLNonNull && field.defaultValue === undefined) required.push(field.name);
    }
    return {
      type: "object",
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
      ...(type.description ? { description: oneLine(type.description) } : {}),
    };
  }
  return schemaOfScalar(type as GraphQLScalarType);
}

function schemaOfScalar(type: GraphQLScalarType): JsonSchema {
  switch (type.name) {
    case "String":
    case "ID":
      return { type: "string" };
    case "Int":
      return { type: "integer" };
    case "Float":
      return { type: "number" };
    case "Boolean":
      return { type: "boolean" };
    case "DateTime":
      return { type: "string", format: "date-time" };
    default:
      return type.description ? { description: oneLine(type.description) } : {};
  }
}

/** A default value as JSON (enum values become their names, as variables carry them). */
function jsonOfValue(value: ValueNode): unknown {
  return valueFromASTUntyped(value);
}

function joinDescriptions(own: string | undefined, ofType: string | undefined): string | undefined {
  const parts = [own, ofType].filter((part): part is string => Boolean(part && part.trim()));
  return parts.length > 0 ? parts.map(oneLine).join(" ") : undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
