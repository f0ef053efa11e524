/**
 * The one MCP prompt: how an agent researches a question with these tools, from what the
 * organization already knows (its conversations and documents) outwards to the web, spending
 * credits only after it has seen what they would cost.
 */
import type { GetPromptResult, Prompt } from "@modelcontextprotocol/sdk/types.js";

export const RESEARCH_PROMPT: Prompt = {
  name: "research_question",
  title: "Research a question across conversations, documents and the web",
  description:
    "A plan for answering a question from everything the organization knows: search its conversations and documents first, open the best hits, and go to the web only when that is not enough, checking the credit cost first.",
  arguments: [
    { name: "question", description: "The question to research.", required: true },
    { name: "allowWeb", description: "\"yes\" to allow web research that spends credits (after a dry run shows the cost); anything else keeps to the organization's own knowledge.", required: false },
  ],
};

export function researchPrompt(args: Record<string, string> | undefined): GetPromptResult {
  const question = args?.question?.trim();
  if (!question) throw new Error("research_question needs the argument `question`: the question to research.");
  const allowWeb = args?.allowWeb?.trim().toLowerCase() === "yes";
  const steps = [
    `Research this question and answer it with citations: ${question}`,
    "",
    "Work through the context-search tools in this order:",
    "1. `search` with the question (leave alpha out for the deployment's default; try alpha 0.9 for exact names, error codes or identifiers). Each hit names its type (Conversation, DocumentChunk, KnowledgeBasePassage, WebResult, SlackMessage, LinkedInPost) and the id to open it with.",
    "2. Open the two or three best hits: `get_conversation` with a Conversation's id, `get_document` with a DocumentChunk's `document.id`. Both page long content: pass the `after` cursor the answer gives you for the next page instead of asking for everything at once.",
    "3. For curated knowledge, `query_knowledge_base` searches the passages of the caller's documents; `query_platform_knowledge` asks the knowledge bases mapped to a capability (e.g. `billing-support`).",
    allowWeb
      ? "4. If the organization's own knowledge does not answer the question, call `estimate_credits` (or `research` / `discover_search_questions` with dryRun: true) and say what the web step will cost. Then call `research` for a cited answer from the web, or `discover_search_questions` to see what people ask about the topic."
      : "4. Keep to the organization's own knowledge: do not call `research`, `discover_search_questions` or web providers without dryRun: true. If the answer needs the web, say so and give the estimate from `estimate_credits`.",
    "5. Answer in a few paragraphs. Cite every claim with where it came from: the conversation's title and id, the document's file name and heading, or the web result's URL. Say plainly what you could not find.",
    "",
    "If a tool returns an error, read its code: BAD_USER_INPUT means fix the arguments and try again; UNAUTHENTICATED or FORBIDDEN means the token cannot reach it; RATE_LIMITED means wait before the next call.",
  ];
  return {
    description: `Research: ${question}`,
    messages: [{ role: "user", content: { type: "text", text: steps.join("\n") } }],
  };
}
