/**
 * Picks the embedder the configuration names: the local Universal Sentence Encoder by default
 * (no network, ever), OpenAI or any OpenAI-compatible server when configured, or the
 * feature-hashing embedder (instant, for tests and quick local runs). Model embedders sit
 * behind the (model, text hash) cache in PostgreSQL, so unchanged text is never embedded twice.
 */
import type { SearchConfig } from "../../config.js";
import type { Database } from "../../database/connect.js";
import { CachedEmbedder, PostgresEmbeddingCacheStore } from "./cached-embedder.js";
import type { Embedder } from "./embedder.js";
import { FeatureHashingEmbedder } from "./hashing-embedder.js";
import { OpenAIEmbedder } from "./openai.js";
import { UniversalSentenceEncoderEmbedder } from "./universal-sentence-encoder.js";

export function createEmbedder(config: SearchConfig, database: Database): Embedder {
  switch (config.embedder) {
    case "hashing":
      return new FeatureHashingEmbedder();
    case "openai":
      return new CachedEmbedder(
        new OpenAIEmbedder({
          apiKey: config.openai.apiKey!,
          model: config.openai.model,
          ...(config.openai.baseUrl ? { baseURL: config.openai.baseUrl } : {}),
          ...(config.openai.dimensions ? { dimensions: config.openai.dimensions } : {}),
        }),
        new PostgresEmbeddingCacheStore(database),
      );
    case "local":
      return new CachedEmbedder(new UniversalSentenceEncoderEmbedder(), new PostgresEmbeddingCacheStore(database));
  }
}
