/**
 * Provider ids (`conversations.keyword`, `web.serper`, …) are the API's names; people read where
 * a result came from and how it was found. Unknown providers (a deployment's own) keep their id.
 */
const SOURCES: Record<string, string> = {
  "conversations.keyword": "Conversations · words",
  "conversations.semantic": "Conversations · meaning",
  "documents.keyword": "Documents · words",
  "documents.semantic": "Documents · meaning",
  "knowledge-bases": "Knowledge bases",
  "web.serper": "Web (Serper)",
  "web.dataforseo": "Web (DataForSEO)",
  "slack.messages": "Slack",
  "linkedin.posts": "LinkedIn",
};

export function sourceLabel(provider: string): string {
  return SOURCES[provider] ?? provider;
}

/** What a source is called in a sentence about it being down ("Web results are unavailable"). */
export function sourceNoun(provider: string): string {
  if (provider.startsWith("web.")) return "Web results";
  if (provider.startsWith("conversations.")) return "Conversation results";
  if (provider.startsWith("documents.")) return "Document results";
  if (provider === "knowledge-bases") return "Knowledge base results";
  if (provider === "slack.messages") return "Slack messages";
  if (provider === "linkedin.posts") return "LinkedIn posts";
  return `Results from ${provider}`;
}
