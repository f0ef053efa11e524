/**
 * What the external-search subgraph's provider clients return, whatever the vendor: results
 * already cleaned (plain text, http(s) URLs only, lengths bounded; see
 * lib/external-apis/sanitize.ts) and in one shape per kind of answer. Each client throws only
 * ExternalApiError (lib/external-apis/errors.ts); retries, breakers and budgets are the
 * caller's (lib/external-apis/policies.ts and the subgraph's credit ledger).
 */

export type ExternalProviderName = "serper" | "perplexity" | "dataforseo" | "slack" | "linkedin";

/** One web search result. */
export interface WebResultData {
  /** Absolute http(s) URL, as the vendor gave it (cleaned); dedup uses its normalized form. */
  url: string;
  title: string;
  snippet: string;
  /** 1-based rank in the vendor's list. */
  position: number;
  provider: ExternalProviderName;
  fetchedAt: Date;
}

/** A "people also ask" entry. */
export interface RelatedQuestion {
  question: string;
  /** The answer snippet the vendor shows, when it shows one. */
  snippet: string | null;
  /** Where that answer comes from, when known. */
  url: string | null;
}

/** What a SERP call (Serper) returns beyond organic results. */
export interface SerpAnswer {
  organic: WebResultData[];
  peopleAlsoAsk: RelatedQuestion[];
  relatedSearches: string[];
}

/** A researched answer with its sources (Perplexity). */
export interface ResearchAnswer {
  /** Plain text (Markdown markers kept, HTML removed). */
  answer: string;
  citations: WebResultData[];
  model: string;
  usage: { promptTokens: number; completionTokens: number };
}

/** One Slack message hit of search.messages. */
export interface SlackMessageData {
  /** `<channel id>:<ts>`: unique within a workspace. */
  id: string;
  channelId: string;
  channelName: string | null;
  author: string | null;
  text: string;
  /** https link to the message in its thread. */
  permalink: string | null;
  postedAt: Date;
}

/** A LinkedIn organization (company, school or showcase page), as the Organization Lookup API gives it. */
export interface LinkedInOrganizationData {
  /** LinkedIn's numeric id (the N of urn:li:organization:N), as a string. */
  linkedInId: string;
  name: string;
  /** The page's handle in linkedin.com/company/<vanityName>, when it has one. */
  vanityName: string | null;
  /** The organization's own website, when it is a safe http(s) URL. */
  website: string | null;
  /** Only answered to an administrator of the page's token; null otherwise. */
  description: string | null;
}

/** A published post of an organization's page (Posts API). */
export interface LinkedInPostData {
  /** urn:li:share:N or urn:li:ugcPost:N. */
  urn: string;
  /** The author's organization id (digits), when the author is an organization. */
  organizationId: string | null;
  /** The commentary as plain text (LinkedIn's little text format resolved: mentions and hashtags as text). */
  text: string;
  /** The title of the article the post shares, when it shares one. */
  articleTitle: string | null;
  /** https link to the post on linkedin.com. */
  url: string;
  publishedAt: Date;
}

/** Every client call takes these. */
export interface CallOptions {
  /** Aborted at the call's deadline or when the request goes away. */
  signal: AbortSignal;
  /** How many results to ask for (the client bounds it to what the vendor allows). */
  limit: number;
}

export interface SerperCredentials { apiKey: string }
export interface PerplexityCredentials { apiKey: string }
export interface DataForSeoCredentials { login: string; password: string }
export interface SlackCredentials { token: string }
/** An organization's LinkedIn OAuth access token, and the page (organization id) its posts are read from. */
export interface LinkedInCredentials { token: string; linkedInOrganization: string }

export interface SerperApi {
  search(query: string, credentials: SerperCredentials, options: CallOptions): Promise<SerpAnswer>;
}
export interface PerplexityApi {
  research(query: string, credentials: PerplexityCredentials, options: CallOptions): Promise<ResearchAnswer>;
}
export interface DataForSeoApi {
  search(query: string, credentials: DataForSeoCredentials, options: CallOptions): Promise<WebResultData[]>;
}
export interface SlackApi {
  searchMessages(query: string, credentials: SlackCredentials, options: CallOptions): Promise<SlackMessageData[]>;
}
export interface LinkedInApi {
  /** The organization with this numeric id; null when LinkedIn has none (404). */
  organizationById(linkedInId: string, credentials: LinkedInCredentials, options: Pick<CallOptions, "signal">): Promise<LinkedInOrganizationData | null>;
  /** The organization whose page has this vanity name; null when none has. */
  organizationByVanityName(vanityName: string, credentials: LinkedInCredentials, options: Pick<CallOptions, "signal">): Promise<LinkedInOrganizationData | null>;
  /** The organization's published posts, newest first. */
  organizationPosts(linkedInId: string, credentials: LinkedInCredentials, options: CallOptions): Promise<LinkedInPostData[]>;
}
