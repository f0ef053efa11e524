/**
 * Operation limits: what one GraphQL request may cost, checked before anything expensive sees it
 * (before the gateway's query planner, before a subgraph's validation and execution). The same
 * limits guard the gateway and every subgraph, so a subgraph reached directly is as safe.
 *
 * Why our own analysis instead of graphql-armor's max-depth / max-aliases / max-directives /
 * cost-limit rules: those are linear (they memoize per fragment) and cannot be bypassed through
 * fragments, but (a) none counts total field selections after fragment expansion, (b) cost-limit
 * has no per-field cost table and ignores `first`/`limit` given through variables or input
 * objects, (c) they run as validation rules beside graphql-js's own, which then still walk a
 * hostile document, and (d) their errors carry no code (`Syntax Error: …`). One memoized pass below
 * computes all five numbers at once: each fragment is summarized once and its summary reused at
 * every spread, so a document of 40 fragments that each spread the next twice costs 40 visits,
 * not 2^40, while the counts it reports are those of the expanded document. Tokens are counted with
 * graphql-js's own lexer before parsing (graphql-js `parse` has `maxTokens` too; counting first lets
 * us name the limit in the error). Field suggestions are blocked with graphql-armor's plugin at the
 * gateway and Apollo's `hideSchemaDetailsFromClientErrors` in subgraphs.
 */
import {
  getNamedType,
  getNullableType,
  isListType,
  GraphQLError,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  Kind,
  Lexer,
  Source,
  TokenKind,
  type ArgumentNode,
  type ASTVisitor,
  type ConstDirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLArgument,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationContext,
  type ValueNode,
} from "graphql";

export interface OperationLimits {
  /** Lexical tokens in the document (punctuation, names, values). */
  maxTokens: number;
  /** Nesting: each field with a selection set, inline fragment and fragment spread is a level. */
  maxDepth: number;
  /** Aliased fields, after fragment expansion. */
  maxAliases: number;
  /** Field selections after fragment expansion (what execution would visit per object). */
  maxSelections: number;
  /** Directives, after fragment expansion. */
  maxDirectives: number;
  /** Estimated cost (the schema's `@cost` and `@listSize`, see `declaredCosts`); lists multiply their children by their size. */
  maxCost: number;
  /** Nesting of the request's variables (JSON objects and arrays). */
  maxVariableDepth: number;
  /** Values (objects, arrays and scalars) in the request's variables, all together. */
  maxVariableValues: number;
  /**
   * `Type.field` → cost, over what the schema declares with `@cost` (a deployment's own tuning,
   * as Hive Gateway's `demandControl.fieldCost`); a field neither names costs 1 with a selection
   * set and 0 without.
   */
  fieldCosts: Record<string, number>;
}

/**
 * Defaults that admit every query in README.md and docs/, the tests, GraphiQL's introspection query and what
 * the Rust planner sends to subgraphs (`_entities` with up to a page of representations), while
 * keeping the Rust planner's parser (which fails near 40 levels) far from its own limit. The
 * largest legitimate read, 100 conversations with 100 messages each, costs about 20,300.
 */
export const DEFAULT_OPERATION_LIMITS: OperationLimits = {
  maxTokens: 5_000,
  maxDepth: 24,
  maxAliases: 50,
  maxSelections: 2_000,
  maxDirectives: 50,
  maxCost: 25_000,
  maxVariableDepth: 20,
  maxVariableValues: 50_000,
  // What each field costs is declared where the field is, in its subgraph's schema (`@cost`, `@listSize`).
  fieldCosts: {},
};

/**
 * A deferred fragment or a streamed field: one more part of the response, and at the gateway one
 * more subgraph request of its own (a deferred root field is planned apart). One rate-limit point
 * each, on top of what its fields cost, so 12 nested `@defer` cost 12 points more than the same
 * query without them.
 */
export const INCREMENTAL_PART_COST = 100;

/**
 * What the schema says a field costs, as Federation's demand control spells it (the cost spec,
 * https://specs.apollo.dev/cost/v0.1, which Apollo Router, Hive Gateway's `demandControl` and Hive
 * Router read): `@cost(weight:)` on the field, on its arguments (counted when given) and on the
 * type it returns, and `@listSize` for how many items a list holds.
 */
interface DeclaredCost {
  /** The field's own weight plus its type's, or null when neither declares one (the default rule applies). */
  weight: number | null;
  /** Argument → its `@cost` weight, spent when the argument is given. */
  argumentWeights: ReadonlyMap<string, number>;
  /** `@listSize(assumedSize:)`: the list's size when nothing slices it. */
  assumedSize: number | null;
  /** `@listSize(slicingArguments:)`: Int arguments whose value is the list's size (the largest given). */
  slicingArguments: readonly string[];
}

/** The names a subgraph or a supergraph may give the spec's two directives (imported, or federation's own prefix). */
const COST_DIRECTIVES = new Set(["cost", "federation__cost"]);
const LIST_SIZE_DIRECTIVES = new Set(["listSize", "federation__listSize"]);

const declaredCostsBySchema = new WeakMap<GraphQLSchema, ReadonlyMap<string, DeclaredCost>>();

/**
 * `Type.field` → what the schema declares for it, read once per schema object. The directives are
 * read from the SDL nodes: a subgraph's schema and the gateway's, built from the supergraph,
 * both keep them there (both composers copy `@cost` and `@listSize` into the supergraph).
 */
export function declaredCosts(schema: GraphQLSchema): ReadonlyMap<string, DeclaredCost> {
  const known = declaredCostsBySchema.get(schema);
  if (known) return known;
  const costs = new Map<string, DeclaredCost>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(isObjectType(type) || isInterfaceType(type)) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      const directives = field.astNode?.directives;
      const returned = getNamedType(field.type);
      const returnedWeight = isObjectType(returned) || isInterfaceType(returned) || isScalarType(returned) || isEnumType(returned) ? costWeight(returned.astNode?.directives) : null;
      const argumentWeights = new Map<string, number>();
      for (const argument of field.args) {
        const weight = costWeight(argument.astNode?.directives);
        if (weight !== null) argumentWeights.set(argument.name, weight);
      }
      const listSize = directives?.find((directive) => LIST_SIZE_DIRECTIVES.has(directive.name.value));
      const weight = costWeight(directives);
      if (weight === null && returnedWeight === null && argumentWeights.size === 0 && !listSize) continue;
      const listArgument = (name: string) => listSize?.arguments?.find((argument) => argument.name.value === name)?.value;
      const assumed = listArgument("assumedSize");
      const slicing = listArgument("slicingArguments");
      costs.set(`${type.name}.${field.name}`, {
        weight: weight === null && returnedWeight === null ? null : (weight ?? 0) + (returnedWeight ?? 0),
        argumentWeights,
        assumedSize: assumed?.kind === Kind.INT ? Number(assumed.value) : null,
        slicingArguments: slicing?.kind === Kind.LIST ? slicing.values.flatMap((value) => (value.kind === Kind.STRING ? [value.value] : [])) : slicing?.kind === Kind.STRING ? [slicing.value] : [],
      });
    }
  }
  declaredCostsBySchema.set(schema, costs);
  return costs;
}

function costWeight(directives: readonly ConstDirectiveNode[] | undefined): number | null {
  const cost = directives?.find((directive) => COST_DIRECTIVES.has(directive.name.value));
  const weight = cost?.arguments?.find((argument) => argument.name.value === "weight")?.value;
  return weight?.kind === Kind.INT ? Number(weight.value) : null;
}

export const OPERATION_LIMIT_EXCEEDED = "OPERATION_LIMIT_EXCEEDED";

/** A request over one of the limits: HTTP 400, and `extensions` name the limit, its value and what the request had. */
export class OperationLimitError extends GraphQLError {
  constructor(message: string, extensions: Record<string, unknown>) {
    super(message, { extensions: { code: OPERATION_LIMIT_EXCEEDED, ...extensions } });
    this.name = "OperationLimitError";
  }
}

function exceeded(limit: string, max: number, actual: number | null, what: string): OperationLimitError {
  const had = actual === null ? `more than ${max.toLocaleString("en-US")}` : formatCount(actual);
  return new OperationLimitError(
    `Operation exceeds the ${limit} limit: at most ${max.toLocaleString("en-US")} ${what} allowed, this one has ${had}. Simplify the operation or split it into several requests.`,
    { limit, max, ...(actual === null ? {} : { actual: actual <= Number.MAX_SAFE_INTEGER ? actual : String(actual) }) },
  );
}

function formatCount(value: number): string {
  return value < 1e15 ? Math.round(value).toLocaleString("en-US") : value.toExponential(2);
}

/**
 * Counts tokens with graphql-js's lexer, stopping at the limit: linear, and never past `max + 1`
 * tokens. It also bounds how deeply brackets nest (`{`, `(`, `[`), before graphql-js's parser,
 * which recurses once per level: a document well under the token limit can still nest a few
 * thousand levels (`{a{a{a…` or `[[[[…` in an argument) and overflow the parser's stack. No
 * operation that passes the depth limit needs more than `maxBracketNesting` (selection sets,
 * arguments and input objects of every level together).
 */
export function checkTokens(query: string, limits: Pick<OperationLimits, "maxTokens" | "maxDepth">): void {
  const lexer = new Lexer(new Source(query));
  const maxNesting = maxBracketNesting(limits.maxDepth);
  let tokens = 0;
  let nesting = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      tokens += 1;
      if (tokens > limits.maxTokens) throw exceeded("token", limits.maxTokens, null, "tokens are");
      if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.PAREN_L || token.kind === TokenKind.BRACKET_L) {
        nesting += 1;
        if (nesting > maxNesting) throw exceeded("depth", limits.maxDepth, null, `levels of nesting are (${maxNesting} nested brackets at most)`);
      } else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.PAREN_R || token.kind === TokenKind.BRACKET_R) {
        nesting = Math.max(0, nesting - 1);
      }
    }
  } catch (error) {
    if (error instanceof OperationLimitError) throw error;
    // A lexical error: parsing reports it with its location.
  }
}

/** Brackets an operation within the depth limit may nest: a selection set per level, plus room for arguments and input values. */
export function maxBracketNesting(maxDepth: number): number {
  return 2 * maxDepth + 16;
}

/**
 * Bounds the request's variables before GraphQL coercion (which recurses, and overflows the stack
 * on a value nested 100,000 levels deep). Iterative, so the check itself cannot overflow.
 */
export function checkVariables(variables: unknown, limits: Pick<OperationLimits, "maxVariableDepth" | "maxVariableValues">): void {
  if (variables === null || typeof variables !== "object") return;
  const stack: { value: unknown; depth: number }[] = [{ value: variables, depth: 0 }];
  let values = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    values += 1;
    if (values > limits.maxVariableValues) throw exceeded("variable size", limits.maxVariableValues, null, "values in variables are");
    if (value === null || typeof value !== "object") continue;
    if (depth + 1 > limits.maxVariableDepth) throw exceeded("variable depth", limits.maxVariableDepth, null, "levels of nesting in variables are");
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
}

/**
 * How many `__typename` selections (aliased or not) of each selection set a gateway in front of a
 * subgraph may add to the client's operation: the query planner's `__typename` (entity and
 * abstract-type selections) and the response cache's `__responseCacheTypeName: __typename`.
 */
export const GATEWAY_ADDED_TYPENAMES = 2;

export interface AnalysisOptions {
  /**
   * `__typename` selections of each selection set (aliased or not, the first ones in document
   * order) that count neither as aliases nor as selections. The gateway counts what the client
   * sent and leaves this at 0; a subgraph sets it to GATEWAY_ADDED_TYPENAMES, so that what the
   * gateway added to plan or cache an operation it admitted is never counted against it
   * downstream (25 aliased `search` fields once passed the gateway and reached the search
   * subgraph as 51 aliases, and the gateway, counting the additions itself to stay in step,
   * refused the standard introspection query: 61 aliases, none of them the client's).
   * The Rust planner sends repeated selections as named fragments of its own, additions included,
   * so fragment definitions have their free ones too. Not free without bound: `__typename` is what
   * a fragment bomb's leaves are made of (a fragment counts at least one selection, see
   * `selectionSet`), and a flood of aliased `__typename` stays bounded by the alias limit. A leaf
   * costs 0 either way.
   */
  freeTypenames?: number;
}

export interface OperationMeasures {
  depth: number;
  aliases: number;
  selections: number;
  directives: number;
  cost: number;
  /** Selection nodes the analysis visited: bounded by the document's size, whatever its fragments expand to. */
  visitedNodes: number;
}

/**
 * Measures every operation of a parsed document and throws an OperationLimitError on the first limit
 * it exceeds. `schema` gives field costs and argument defaults (`first: Int = 20`); without it
 * every field costs by the default rule. `variables` feed `first`/`limit` given as variables.
 */
export function checkDocument(document: DocumentNode, limits: OperationLimits, schema?: GraphQLSchema | null, variables?: Record<string, unknown> | null, options: AnalysisOptions = {}): OperationMeasures {
  const analysis = new DocumentAnalysis(document, limits, schema ?? null, variables ?? {}, options.freeTypenames ?? 0);
  const total: OperationMeasures = { depth: 0, aliases: 0, selections: 0, directives: 0, cost: 0, visitedNodes: 0 };
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const rootType = schema ? (schema.getRootType(definition.operation) ?? null) : null;
    const measures = analysis.operation(definition.selectionSet, rootType);
    measures.directives += definition.directives?.length ?? 0;
    enforce(measures, limits);
    for (const key of ["depth", "aliases", "selections", "directives", "cost"] as const) total[key] = Math.max(total[key], measures[key]);
  }
  total.visitedNodes = analysis.visitedNodes;
  return total;
}

function enforce(measures: Omit<OperationMeasures, "visitedNodes">, limits: OperationLimits): void {
  if (measures.depth > limits.maxDepth) throw exceeded("depth", limits.maxDepth, measures.depth, "levels of nesting (fields, inline fragments and fragment spreads) are");
  if (measures.aliases > limits.maxAliases) throw exceeded("alias", limits.maxAliases, measures.aliases, "aliased fields are");
  if (measures.selections > limits.maxSelections) throw exceeded("selection", limits.maxSelections, measures.selections, "field selections (after expanding fragments) are");
  if (measures.directives > limits.maxDirectives) throw exceeded("directive", limits.maxDirectives, measures.directives, "directives are");
  if (measures.cost > limits.maxCost) throw exceeded("cost", limits.maxCost, measures.cost, "cost units (list fields count once per requested item) are");
}

/**
 * `cost` is fixed; `listCost` is what the set's list-typed fields cost per item of a page that an
 * enclosing field sizes: in `conversations(first: 100) { totalCount nodes { id } }` the `nodes`
 * count 100 times and `totalCount` once. Keeping the two apart keeps a fragment's summary
 * independent of where it is spread, so it is computed once.
 */
interface Measures {
  depth: number;
  aliases: number;
  selections: number;
  directives: number;
  cost: number;
  listCost: number;
}

const EMPTY: Readonly<Measures> = { depth: 0, aliases: 0, selections: 0, directives: 0, cost: 0, listCost: 0 };

class DocumentAnalysis {
  visitedNodes = 0;
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  /** Each fragment's measures relative to its own selection set; `null` while being computed (a cycle). */
  private readonly summaries = new Map<string, Measures | null>();
  private readonly declared: ReadonlyMap<string, DeclaredCost>;

  constructor(
    document: DocumentNode,
    private readonly limits: OperationLimits,
    private readonly schema: GraphQLSchema | null,
    private readonly variables: Record<string, unknown>,
    private readonly freeTypenames: number,
  ) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
    this.declared = schema ? declaredCosts(schema) : new Map();
  }

  /** An operation's measures: list fields sized by nothing above them count once per item. */
  operation(set: SelectionSetNode, rootType: GraphQLNamedType | null): Measures {
    const measures = this.selectionSet(set, rootType, 0);
    return { ...measures, cost: measures.cost + measures.listCost, listCost: 0 };
  }

  /**
   * `nesting` is a lower bound of the absolute depth (it counts the fragments being expanded too),
   * so the walk stops as soon as a path is too deep: the recursion never goes past `maxDepth`.
   * A fragment (spread or inline) counts at least one selection, so that a bomb whose leaves are
   * all free `__typename` fields still counts one selection per spread it expands: every
   * selection set then holds a counted selection beside its at most `freeTypenames` free ones.
   * Where no `__typename` is free (the gateway) every fragment already counts one or more.
   */
  selectionSet(set: SelectionSetNode, parentType: GraphQLNamedType | null, nesting: number): Measures {
    if (nesting > this.limits.maxDepth) throw exceeded("depth", this.limits.maxDepth, null, "levels of nesting (fields, inline fragments and fragment spreads) are");
    const result: Measures = { ...EMPTY };
    const add = (child: Measures) => {
      result.depth = Math.max(result.depth, child.depth);
      result.aliases += child.aliases;
      result.selections += child.selections;
      result.directives += child.directives;
      result.cost += child.cost;
      result.listCost += child.listCost;
    };
    let freeTypenames = this.freeTypenames;
    for (const selection of set.selections) {
      this.visitedNodes += 1;
      const directives = selection.directives?.length ?? 0;
      if (selection.kind === Kind.FIELD) {
        const field = parentType && (isObjectType(parentType) || isInterfaceType(parentType)) ? parentType.getFields()[selection.name.value] : undefined;
        const coordinate = `${parentType?.name ?? ""}.${selection.name.value}`;
        const declared = this.declared.get(coordinate);
        const own =
          (this.limits.fieldCosts[coordinate] ?? declared?.weight ?? (selection.selectionSet ? 1 : 0)) +
          (declared ? this.argumentWeights(selection.arguments ?? [], declared) : 0) +
          (selection.directives?.some((directive) => directive.name.value === "stream") ? INCREMENTAL_PART_COST : 0);
        const child = selection.selectionSet ? this.selectionSet(selection.selectionSet, field ? getNamedType(field.type) : null, nesting + 1) : { ...EMPTY };
        const size = selection.selectionSet ? this.listSize(selection.arguments ?? [], field?.args ?? [], declared) : null;
        const isList = field ? isListType(getNullableType(field.type)) : null;
        const free = freeTypenames > 0 && selection.name.value === "__typename" && !selection.selectionSet;
        if (free) freeTypenames -= 1;
        const measures: Measures = {
          depth: selection.selectionSet ? child.depth + 1 : 0,
          aliases: child.aliases + (selection.alias && !free ? 1 : 0),
          selections: child.selections + (free ? 0 : 1),
          directives: child.directives + directives,
          cost: 0,
          listCost: 0,
        };
        if (isList === false) {
          // An object (a connection, a search result): its page size applies to its list fields.
          measures.cost = own + child.cost + (size ?? 1) * child.listCost;
        } else {
          // A list (or a field the schema does not know): every item costs its whole selection.
          const total = own + (size ?? 1) * (child.cost + child.listCost);
          if (isList && size === null) measures.listCost = total;
          else measures.cost = total;
        }
        add(measures);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? (this.schema?.getType(selection.typeCondition.name.value) ?? null) : parentType;
        const child = this.selectionSet(selection.selectionSet, type, nesting + 1);
        add({ ...child, depth: child.depth + 1, selections: Math.max(1, child.selections), directives: child.directives + directives, cost: child.cost + deferredPartCost(selection.directives) });
      } else {
        const child = this.fragment(selection.name.value, nesting + 1);
        add({ ...child, depth: child.depth + 1, selections: Math.max(1, child.selections), directives: child.directives + directives, cost: child.cost + deferredPartCost(selection.directives) });
      }
      // Checked as the counts grow, so a wide document stops at its first excess, not at its end.
      if (result.selections > this.limits.maxSelections || result.aliases > this.limits.maxAliases) enforce(result, this.limits);
    }
    return result;
  }

  private fragment(name: string, nesting: number): Measures {
    const known = this.summaries.get(name);
    if (known) return known;
    if (known === null) {
      throw new OperationLimitError(`Fragment "${name}" spreads itself (directly or through other fragments): fragments must not form cycles.`, { limit: "fragment cycle" });
    }
    const definition = this.fragments.get(name);
    // An unknown fragment: validation reports it with its location.
    if (!definition) return { ...EMPTY };
    this.summaries.set(name, null);
    const summary = this.selectionSet(definition.selectionSet, this.schema?.getType(definition.typeCondition.name.value) ?? null, nesting);
    summary.directives += definition.directives?.length ?? 0;
    this.summaries.set(name, summary);
    return summary;
  }

  /** The `@cost` weights of the arguments given (a variable counts as given: its value is not known during validation). */
  private argumentWeights(args: readonly ArgumentNode[], declared: DeclaredCost): number {
    let weight = 0;
    for (const argument of args) weight += declared.argumentWeights.get(argument.name.value) ?? 0;
    return weight;
  }

  /**
   * How many items a field returns at most: what its `@listSize` says (the largest slicing
   * argument given or defaulted, else its assumed size); for a field without one, its
   * `first`/`last`/`limit` argument (or `input.limit`, which the spec's slicing arguments cannot
   * name: they must be the field's own Int arguments), or its `representations`.
   */
  private listSize(args: readonly ArgumentNode[], definitions: readonly GraphQLArgument[], declared: DeclaredCost | undefined): number | null {
    if (declared && (declared.slicingArguments.length > 0 || declared.assumedSize !== null)) {
      const sliced = declared.slicingArguments.map((name) => this.intArgument(args, definitions, name)).filter((value): value is number => value !== null);
      if (sliced.length > 0) return Math.max(1, ...sliced);
      if (declared.assumedSize !== null) return Math.max(1, declared.assumedSize);
    }
    for (const name of ["first", "last", "limit"]) {
      const value = this.intArgument(args, definitions, name);
      if (value !== null) return Math.max(1, value);
    }
    const input = args.find((arg) => arg.name.value === "input");
    const inputDefinition = definitions.find((arg) => arg.name === "input");
    if (input || inputDefinition) {
      const value = input ? this.resolve(input.value) : null;
      const limit = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>).limit : undefined;
      if (typeof limit === "number") return Math.max(1, limit);
      const inputType = inputDefinition ? getNamedType(inputDefinition.type) : null;
      const fallback = inputType && isInputObjectType(inputType) ? inputType.getFields().limit?.defaultValue : undefined;
      if (typeof fallback === "number") return Math.max(1, fallback);
    }
    const representations = args.find((arg) => arg.name.value === "representations");
    if (representations) {
      const value = this.resolve(representations.value);
      if (Array.isArray(value)) return Math.max(1, value.length);
    }
    return null;
  }

  private intArgument(args: readonly ArgumentNode[], definitions: readonly GraphQLArgument[], name: string): number | null {
    const arg = args.find((candidate) => candidate.name.value === name);
    const value = arg ? this.resolve(arg.value) : definitions.find((candidate) => candidate.name === name)?.defaultValue;
    return typeof value === "number" && Number.isFinite(value) ? value : null;
  }

  /** A literal or variable as a plain value; only what `listSize` needs (ints, lists, objects). */
  private resolve(node: ValueNode): unknown {
    switch (node.kind) {
      case Kind.VARIABLE:
        return this.variables[node.name.value];
      case Kind.INT:
        return Number(node.value);
      case Kind.LIST:
        return node.values;
      case Kind.OBJECT:
        return Object.fromEntries(node.fields.map((field) => [field.name.value, field.value.kind === Kind.VARIABLE || field.value.kind === Kind.INT ? this.resolve(field.value) : null]));
      default:
        return null;
    }
  }
}

/** A fragment marked `@defer` is one more part of the response (see INCREMENTAL_PART_COST). */
function deferredPartCost(directives: readonly { name: { value: string } }[] | undefined): number {
  return directives?.some((directive) => directive.name.value === "defer") ? INCREMENTAL_PART_COST : 0;
}

/**
 * The same check as a graphql-js validation rule (Apollo Server's `validationRules`). It runs on
 * entering the document, before any other rule has walked a selection set; variables are not known
 * during validation, so `first`/`limit` given as variables count by their schema default there.
 * It is the subgraphs' check, so the `__typename` fields a gateway adds are free (GATEWAY_ADDED_TYPENAMES).
 */
export function operationLimitsRule(limits: OperationLimits) {
  return (context: ValidationContext): ASTVisitor => ({
    Document: {
      enter(document) {
        try {
          checkDocument(document, limits, context.getSchema(), null, { freeTypenames: GATEWAY_ADDED_TYPENAMES });
        } catch (error) {
          if (!(error instanceof GraphQLError)) throw error;
          context.reportError(error);
        }
        return undefined;
      },
    },
  });
}

/**
 * The request-level check of a subgraph's HTTP request, before Apollo parses it: tokens of the
 * query and size of the variables, for a JSON body (or a batch of them) or a GET's query string.
 */
export function requestOverLimits(body: unknown, searchParams: URLSearchParams, limits: OperationLimits): OperationLimitError | null {
  try {
    for (const request of Array.isArray(body) ? body : [body]) {
      if (!request || typeof request !== "object") continue;
      const { query, variables } = request as { query?: unknown; variables?: unknown };
      if (typeof query === "string") checkTokens(query, limits);
      checkVariables(variables, limits);
    }
    const query = searchParams.get("query");
    if (query) checkTokens(query, limits);
    const variables = searchParams.get("variables");
    if (variables) {
      try {
        checkVariables(JSON.parse(variables), limits);
      } catch (error) {
        if (error instanceof OperationLimitError) throw error;
        // Not JSON: Apollo answers that with its own 400.
      }
    }
    return null;
  } catch (error) {
    if (error instanceof OperationLimitError) return error;
    throw error;
  }
}

const TOKEN_LIMIT_MESSAGE = /Document contains more than (\d+) tokens/;

/**
 * Apollo Server reports every validation error as GRAPHQL_VALIDATION_FAILED and every parse error as
 * GRAPHQL_PARSE_FAILED; this gives an exceeded limit back its own code (for `formatError`).
 */
export function withOperationLimitCode<T extends { message: string; extensions?: Record<string, unknown> }>(formatted: T, error: unknown): T {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (original instanceof OperationLimitError) return { ...formatted, extensions: { ...formatted.extensions, ...original.extensions } };
  const tokens = TOKEN_LIMIT_MESSAGE.exec(formatted.message);
  if (tokens && formatted.extensions?.code === "GRAPHQL_PARSE_FAILED") {
    const max = Number(tokens[1]);
    const limitError = exceeded("token", max, null, "tokens are");
    return { ...formatted, message: limitError.message, extensions: { ...formatted.extensions, ...limitError.extensions } };
  }
  return formatted;
}
