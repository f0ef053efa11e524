/** The `DateTime` scalar every subgraph shares: an instant as an ISO-8601 string in UTC. */
import { GraphQLScalarType, Kind } from "graphql";
import { badUserInput } from "./errors.js";

export const DateTime = new GraphQLScalarType<Date, string>({
  name: "DateTime",
  description: "An instant in time, as an ISO-8601 string in UTC.",
  serialize(value) {
    const date = value instanceof Date ? value : new Date(value as string);
    if (Number.isNaN(date.getTime())) throw new TypeError(`DateTime cannot represent ${String(value)}`);
    return date.toISOString();
  },
  parseValue(value) {
    return parseDateTime(value);
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw badUserInput("DateTime", "must be an ISO-8601 string");
    return parseDateTime(ast.value);
  },
});

function parseDateTime(value: unknown): Date {
  const date = typeof value === "string" ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw badUserInput("DateTime", `must be an ISO-8601 string, got ${JSON.stringify(value)}`);
  return date;
}
