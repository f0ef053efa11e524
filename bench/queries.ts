/** The GraphQL documents the benchmarks send. */

/*
 * Every search document selects `providers { name status error }`: a provider that timed out or
 * failed still gives a 200 with fewer (or no) hits, and a benchmark that did not look would
 * count those quick, empty answers as throughput.
 */

/**
 * Through the gateway: 20 hits with their Conversations' titles. The search subgraph provides
 * the title (`@provides`, issue 12), so the planner sends this as one fetch to it.
 */
export const GATEWAY_SEARCH = `query BenchSearch($input: SearchInput!) {
  search(input: $input) { providers { name status error } hits { score item { __typename ... on Conversation { id title } } } }
}`;

/**
 * Through the gateway, asking each Conversation for a field the search subgraph does not provide
 * (createdAt): the page's entities then come from the conversations subgraph in one `_entities`
 * call, which is what the batching scenario counts.
 */
export const GATEWAY_SEARCH_WITH_ENTITIES = `query BenchSearch($input: SearchInput!) {
  search(input: $input) { providers { name status error } hits { score item { __typename ... on Conversation { id title createdAt } } } }
}`;

/** Straight to the search subgraph: the same query without the entity fields it does not own. */
export const DIRECT_SEARCH = `query BenchSearch($input: SearchInput!) {
  search(input: $input) { providers { name status error } hits { score item { __typename ... on Conversation { id } } } }
}`;

/**
 * Straight to the search subgraph, with the titles: the fair baseline for GATEWAY_SEARCH now that
 * the search subgraph answers titles itself (the same fields, the same statement for titles).
 */
export const DIRECT_SEARCH_WITH_TITLES = GATEWAY_SEARCH;

/** For latency runs: also says whether the page came from the cache and how long the subgraph took. */
export const LATENCY_SEARCH = `query BenchSearch($input: SearchInput!) {
  search(input: $input) { cached tookMs providers { name status tookMs } hits { score item { __typename ... on Conversation { id title } } } }
}`;

/** The soak's mix: searches at various alphas, the newest-first list, one conversation with its first messages. */
export const SOAK_SEARCH = `query SoakSearch($input: SearchInput!) {
  search(input: $input) { cached providers { name status error } hits { score item { __typename ... on Conversation { id title messageCount updatedAt } } } pageInfo { hasNextPage endCursor } }
}`;

export const SOAK_LIST = `query SoakList($first: Int!) {
  conversations(first: $first) { totalCount nodes { id title messageCount updatedAt } pageInfo { hasNextPage endCursor } }
}`;

export const SOAK_CONVERSATION = `query SoakConversation($id: ID!) {
  conversation(id: $id) { id title ownerId messageCount tokenCount messages(first: 5) { nodes { role content position } } }
}`;

/** What the gateway sends the conversations subgraph for a page of hits: one `_entities` call. */
export const CONVERSATION_ENTITIES = `query BenchEntities($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on Conversation { id title } }
}`;
