/**
 * A prompt's size in tokens, for the estimate made before a paid call and for the usage of a
 * call whose vendor reported none (a stream we cut). Counted with the project's counter
 * (o200k_base, in its worker thread), plus the chat format's own tokens as OpenAI documents
 * them for its models (about 3 per message and 3 to prime the reply); other vendors' templates
 * differ by a few tokens per message.
 */
import { countTokensOfEach } from "../text/token-count.js";
import type { ChatMessage } from "./language-model.js";

/** Most characters of all messages of one request together: the bound checked before any tokenizer or model sees a prompt. */
export const MAX_PROMPT_CHARACTERS = 400_000;

const TOKENS_PER_MESSAGE = 3;
const TOKENS_TO_PRIME_REPLY = 3;

export function promptCharacters(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, message) => sum + message.content.length, 0);
}

export async function countPromptTokens(messages: readonly ChatMessage[]): Promise<number> {
  const characters = promptCharacters(messages);
  if (characters > MAX_PROMPT_CHARACTERS) throw new RangeError(`a prompt may have at most ${MAX_PROMPT_CHARACTERS} characters, this one has ${characters}`);
  const counts = await countTokensOfEach(messages.map((message) => message.content));
  return counts.reduce((sum, count) => sum + count + TOKENS_PER_MESSAGE, TOKENS_TO_PRIME_REPLY);
}
