/**
 * Grounded answers (`Query.answer`): the search subgraph's answer pipeline. The service
 * retrieves and writes (answer-service.ts); these resolvers make the writing lazy, so a client
 * that selects only `passages`, or `@defer`s the text, gets the passages without waiting for
 * (or paying for) the model.
 */
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import type { GraphQLResolveInfo } from "graphql";
import type { SearchContext } from "../resolvers.js";
import { selectsField } from "../selection.js";
import type { AnswerInput } from "./answer-input.js";
import type { AnswerCitationData, AnswerPassageData, AnswerService, Retrieval, WrittenAnswer } from "./answer-service.js";

export { AnswerService, modelLessAnswerModel } from "./answer-service.js";

/** What `Query.answer` resolves to: the retrieval, and the answer (written by the root resolver when any field of it is selected). */
interface AnswerRoot {
  retrieval: Retrieval;
  written(): Promise<WrittenAnswer>;
}

const fromWritten =
  <K extends keyof WrittenAnswer>(key: K) =>
  async (root: AnswerRoot) =>
    (await root.written())[key];

/** Every field of Answer that needs the answer written (all but `passages` and `providers`). */
const WRITTEN_FIELDS = ["status", "mode", "text", "citations", "grounded", "groundingNote", "truncated", "model", "modelNote", "credits", "estimatedCredits", "usage"] as const satisfies ReadonlyArray<keyof WrittenAnswer>;

export const answerResolvers = {
  Query: {
    async answer(_source: unknown, args: { input: AnswerInput }, context: SearchContext, info: GraphQLResolveInfo): Promise<AnswerRoot> {
      const tenant = context.requireTenant();
      const retrieval = await context.answers.retrieve(tenant, args.input, context.highlightLoader());
      const written = WRITTEN_FIELDS.some((field) => selectsField(info, field)) ? await context.answers.write(tenant, retrieval, context.writes.signal) : null;
      // Written here when selected, so a failed model call is one error on `answer`, not one per field.
      return { retrieval, written: async () => written ?? (await context.answers.write(tenant, retrieval, context.writes.signal)) };
    },
    answerSettings(_source: unknown, _args: unknown, context: SearchContext) {
      // The model is the deployment's, the same for every organization; the caller must still be one.
      context.requireTenant();
      const model = context.answers.model;
      return { model, spendsCredits: model !== null };
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
