/**
 * Grounded answers (`Query.answer`): the search subgraph's answer pipeline. The service
 * retrieves and writes (answer-service.ts); these resolvers make the writing lazy, so a client
 * that selects only `passages`, or `@defer`s the text, gets the passages without waiting for
 * (or paying for) the model.
 */
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import type { SearchContext } from "../resolvers.js";
import type { AnswerInput } from "./answer-input.js";
import type { AnswerCitationData, AnswerPassageData, AnswerService, Retrieval, WrittenAnswer } from "./answer-service.js";

export { AnswerService, modelLessAnswerModel } from "./answer-service.js";

/** What `Query.answer` resolves to: the retrieval, and the answer written on first demand (once). */
interface AnswerRoot {
  retrieval: Retrieval;
  written(): Promise<WrittenAnswer>;
}

const fromWritten =
  <K extends keyof WrittenAnswer>(key: K) =>
  async (root: AnswerRoot) =>
    (await root.written())[key];

export const answerResolvers = {
  Query: {
    async answer(_source: unknown, args: { input: AnswerInput }, context: SearchContext): Promise<AnswerRoot> {
      const tenant = context.requireTenant();
      const retrieval = await context.answers.retrieve(tenant, args.input, context.highlightLoader());
      let written: Promise<WrittenAnswer> | null = null;
      return { retrieval, written: () => (written ??= context.answers.write(tenant, retrieval, context.writes.signal)) };
    },
  },
  types: {
    Answer: {
      passages: (root: AnswerRoot) => root.retrieval.passages,
      providers: (root: AnswerRoot) => root.retrieval.providers,
      status: fromWritten("status"),
      mode: fromWritten("mode"),
      text: fromWritten("text"),
      citations: fromWritten("citations"),
      grounded: fromWritten("grounded"),
      groundingNote: fromWritten("groundingNote"),
      truncated: fromWritten("truncated"),
      model: fromWritten("model"),
      modelNote: fromWritten("modelNote"),
      credits: fromWritten("credits"),
      estimatedCredits: fromWritten("estimatedCredits"),
      usage: fromWritten("usage"),
    },
    AnswerPassage: {
      matches: (passage: AnswerPassageData) => passage.ranges,
    },
    AnswerCitation: {
      passage: (citation: AnswerCitationData) => citation.passage,
    },
  } satisfies GraphQLResolverMap<SearchContext>,
};
