/**
 * Deterministic generator of demo conversations between a user and an AI assistant.
 *
 * The output seeds the demo organization and feeds benchmarks and search-quality checks, so it
 * has to look like real assistant traffic to a search index: many topics, each with its own
 * vocabulary, concrete details (commands, error messages, numbers, names) and varied wording.
 * Every topic is a small grammar: paired user/assistant turns written as templates with
 * `[[alternative|alternative]]` choices and `{{variable}}` slots. Variables are bound once per
 * conversation, so the service, table or city named in the question is the one the answer talks
 * about.
 *
 * Each conversation draws from its own PRNG stream derived from (seed, index), so output is
 * reproducible, independent of how far a caller iterates, and nothing has to be kept in memory.
 */

export type DemoMessageRole = "user" | "assistant" | "system" | "tool";

export interface DemoMessage {
  role: DemoMessageRole;
  content: string;
}

export interface DemoConversation {
  title: string;
  /** index into the caller's list of users (0 .. users-1): who owns it */
  ownerIndex: number;
  createdAt: Date;
  messages: DemoMessage[];
  /** the topic key it was generated from, e.g. "postgres-deadlock"; useful for evaluation */
  topic: string;
}

export interface DemoConversationOptions {
  count: number; // how many conversations
  seed?: number; // default 42; same seed => identical output
  users?: number; // default 8; ownerIndex is drawn from 0..users-1 (skewed: some users have many more)
  now?: Date; // default new Date("2026-11-01T12:00:00Z"); createdAt spread over the 180 days before it, more recent ones denser
}

const DEFAULT_SEED = 42;
const DEFAULT_USERS = 8;
const DEFAULT_NOW = "2026-11-01T12:00:00Z";
const WINDOW_MS = 180 * 86_400_000;
const MAX_MESSAGES = 30;
// Callers rely on content <= 100,000 and titles <= 500 characters. Templates stay far below both;
// the clamps are a backstop. Titles are held to 80, the length of an assistant app's auto-titles.
const MAX_CONTENT_CHARS = 100_000;
const MAX_TITLE_CHARS = 80;

/** Lazily yields conversations one at a time so 100k can be streamed into a database without holding them all. */
export function* demoConversations(options: DemoConversationOptions): Generator<DemoConversation> {
  // Being a generator, invalid options surface as a RangeError on the first next(), not at the call.
  const { count, seed, users, now } = normalizeOptions(options);
  const ownerCumulative = zipfCumulative(users);
  const nowMs = now.getTime();
  for (let index = 0; index < count; index++) {
    yield buildConversation(mulberry32(conversationSeed(seed, index)), ownerCumulative, nowMs);
  }
}

/** Convenience: Array.from(demoConversations(options)). */
export function generateDemoConversations(options: DemoConversationOptions): DemoConversation[] {
  return Array.from(demoConversations(options));
}

interface NormalizedOptions {
  count: number;
  seed: number;
  users: number;
  now: Date;
}

function normalizeOptions(options: DemoConversationOptions): NormalizedOptions {
  const { count, seed = DEFAULT_SEED, users = DEFAULT_USERS, now = new Date(DEFAULT_NOW) } = options;
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`count must be a non-negative integer, got ${count}`);
  }
  if (!Number.isSafeInteger(users) || users < 1) {
    throw new RangeError(`users must be a positive integer, got ${users}`);
  }
  if (!Number.isFinite(seed)) {
    throw new RangeError(`seed must be a finite number, got ${seed}`);
  }
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
    throw new RangeError("now must be a valid Date");
  }
  return { count, seed: Math.trunc(seed) >>> 0, users, now };
}

// ---------------------------------------------------------------------------------------------
// Randomness

type Rng = () => number;

/** mulberry32: tiny, fast and good enough for content; a global random source would make demos unreproducible. */
export function mulberry32(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** murmur3's finalizer: a bijection on 32-bit ints that spreads nearby inputs far apart. */
function mix32(value: number): number {
  let x = value >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

// A stream per conversation (rather than one shared stream) keeps conversation #n identical no
// matter how many were generated before it, so prefixes of a large run match a small run.
function conversationSeed(seed: number, index: number): number {
  return mix32(mix32(seed) ^ Math.imul(index + 1, 0x9e3779b9));
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  if (items.length === 0) throw new Error("pick() from an empty list");
  return items[Math.floor(rng() * items.length)] as T;
}

function shuffle<T>(rng: Rng, items: readonly T[]): T[] {
  const result = items.slice();
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [result[i], result[j]] = [result[j] as T, result[i] as T];
  }
  return result;
}

function cumulative(weights: readonly number[]): number[] {
  let total = 0;
  return weights.map((weight) => (total += weight));
}

function pickWeighted(rng: Rng, cumulativeWeights: readonly number[]): number {
  const target = rng() * (cumulativeWeights[cumulativeWeights.length - 1] ?? 0);
  let low = 0;
  let high = cumulativeWeights.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((cumulativeWeights[mid] ?? 0) > target) high = mid;
    else low = mid + 1;
  }
  return low;
}

// Real workspaces have a few power users and a long tail; Zipf (s = 1) gives user 0 roughly
// eight times the conversations of user 7 with the default of 8 users.
function zipfCumulative(users: number): number[] {
  return cumulative(Array.from({ length: users }, (_, rank) => 1 / (rank + 1)));
}

// ---------------------------------------------------------------------------------------------
// Templates

type TemplateNode = string | VariableNode | ChoiceNode;
interface VariableNode {
  readonly kind: "var";
  readonly name: string;
}
interface ChoiceNode {
  readonly kind: "choice";
  readonly options: readonly (readonly TemplateNode[])[];
}

const VARIABLE_NAME = /^[A-Za-z][A-Za-z0-9]*$/;
const compiledTemplates = new Map<string, readonly TemplateNode[]>();

// Parsed once per distinct template; a 100k run renders the same few thousand templates millions
// of times.
function compile(source: string): readonly TemplateNode[] {
  let nodes = compiledTemplates.get(source);
  if (nodes === undefined) {
    nodes = parseTemplate(source);
    compiledTemplates.set(source, nodes);
  }
  return nodes;
}

function parseTemplate(source: string): TemplateNode[] {
  let pos = 0;
  // `|` and `]]` only mean something inside `[[ ]]`, so markdown tables and code stay literal.
  const sequence = (inChoice: boolean): TemplateNode[][] => {
    const options: TemplateNode[][] = [[]];
    let text = "";
    const flush = () => {
      if (text !== "") (options[options.length - 1] as TemplateNode[]).push(text);
      text = "";
    };
    while (pos < source.length) {
      if (source.startsWith("[[", pos)) {
        flush();
        pos += 2;
        (options[options.length - 1] as TemplateNode[]).push({ kind: "choice", options: sequence(true) });
        continue;
      }
      if (inChoice && source.startsWith("]]", pos)) {
        flush();
        pos += 2;
        return options;
      }
      if (inChoice && source[pos] === "|") {
        flush();
        options.push([]);
        pos += 1;
        continue;
      }
      if (source.startsWith("{{", pos)) {
        const close = source.indexOf("}}", pos + 2);
        const name = close < 0 ? "" : source.slice(pos + 2, close);
        // Anything else between braces (Helm's `{{ .Values.x }}`, GitHub's `${{ secrets.X }}`) is content.
        if (VARIABLE_NAME.test(name)) {
          flush();
          (options[options.length - 1] as TemplateNode[]).push({ kind: "var", name });
          pos = close + 2;
          continue;
        }
      }
      text += source[pos];
      pos += 1;
    }
    if (inChoice) throw new Error(`Unclosed [[ in template: ${source.slice(0, 80)}`);
    flush();
    return options;
  };
  return sequence(false)[0] as TemplateNode[];
}

/** Per-conversation state: the PRNG and the variable bindings that keep all turns consistent. */
class Scene {
  private readonly bindings = new Map<string, string>();

  constructor(
    readonly rng: Rng,
    readonly topic: Topic,
  ) {
    if (topic.cases !== undefined) {
      for (const [name, value] of Object.entries(pick(rng, topic.cases))) this.bindings.set(name, value);
    }
  }

  render(source: string): string {
    return this.renderNodes(compile(source));
  }

  /** `count` distinct key points of the topic, rendered, without trailing punctuation. */
  points(min: number, max: number): string[] {
    const count = Math.min(this.topic.points.length, min + Math.floor(this.rng() * (max - min + 1)));
    return shuffle(this.rng, this.topic.points)
      .slice(0, count)
      .map((point) => this.render(point));
  }

  private value(name: string): string {
    const bound = this.bindings.get(name);
    if (bound !== undefined) return bound;
    let value: string;
    if (name === "subject") {
      value = this.render(this.topic.subject);
    } else if (name === "companyDomain") {
      // Hostnames and bucket names need the company as a slug: "Baltic Freight" -> "balticfreight".
      value = this.value("company").toLowerCase().replace(/[^a-z0-9]+/g, "");
    } else {
      const candidates = this.topic.vars?.[name] ?? GLOBAL_VARS[name];
      if (candidates === undefined) throw new Error(`Unknown template variable {{${name}}} in topic ${this.topic.key}`);
      value = this.render(pick(this.rng, candidates));
    }
    this.bindings.set(name, value);
    return value;
  }

  private renderNodes(nodes: readonly TemplateNode[]): string {
    let out = "";
    for (const node of nodes) {
      if (typeof node === "string") out += node;
      else if (node.kind === "var") out += this.value(node.name);
      else out += this.renderNodes(pick(this.rng, node.options));
    }
    return out;
  }
}

type Json = string | number | boolean | null | readonly Json[] | { readonly [key: string]: Json };

function renderJson(scene: Scene, template: Json): Json {
  if (typeof template === "string") return scene.render(template);
  if (Array.isArray(template)) return template.map((item: Json) => renderJson(scene, item));
  if (template !== null && typeof template === "object") {
    const result: { [key: string]: Json } = {};
    for (const [key, value] of Object.entries(template)) result[key] = renderJson(scene, value);
    return result;
  }
  return template;
}

/**
 * Tag for multi-line content. Reads the raw source so code snippets keep their backslashes
 * (`\d+`, `"\n"`) exactly as written; only escaped backticks and `\${` are unescaped.
 */
function md(strings: TemplateStringsArray, ...noSubstitutions: never[]): string {
  if (strings.raw.length !== 1 || noSubstitutions.length > 0) throw new Error("md`` content takes no substitutions");
  return (strings.raw[0] ?? "").replace(/\\([`$])/g, "$1").replace(/^\n+|\n+$/g, "");
}

// ---------------------------------------------------------------------------------------------
// Assembling a conversation

type Domain = "engineering" | "data" | "writing" | "business" | "personal" | "science";

interface Exchange {
  /** For opening exchanges: titles an assistant app would give a chat that starts this way. */
  readonly titles?: readonly string[];
  readonly user: string;
  readonly assistant: string;
  /** A tool result (search hit, command output) the assistant saw before answering. */
  readonly tool?: Json;
}

interface Topic {
  readonly key: string;
  readonly domain: Domain;
  /** Relative frequency; engineering questions dominate a team's real traffic. */
  readonly weight: number;
  /** Noun phrase for generic follow-ups ("Summarize this for {{name}}"), e.g. "the checkout deadlock". */
  readonly subject: string;
  /** Coherent bundles of variables (a service with its own tables), one chosen per conversation. */
  readonly cases?: readonly Readonly<Record<string, string>>[];
  readonly vars?: Readonly<Record<string, readonly string[]>>;
  /** Titles that fit any opening exchange of the topic. */
  readonly titles: readonly string[];
  /** Opening question with the answer written for it. */
  readonly starts: readonly Exchange[];
  /** Later turns, in a sensible order; a conversation uses an order-preserving subset. */
  readonly followUps: readonly Exchange[];
  /** Short, concrete takeaways (no final period) reused by summaries and checklists. */
  readonly points: readonly string[];
}

/** Works for any topic: the answer is assembled from the topic's key points. */
interface GenericExchange {
  readonly user: string;
  readonly assistant: (scene: Scene) => string;
}

type PlannedTurn = Exchange | GenericExchange;

// Most conversations have 2–6 user turns (4–12 messages); a few run long.
const TURN_COUNTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] as const;
const TURN_CUMULATIVE = cumulative([7, 21, 22, 17, 12, 8, 4, 3, 2, 1.5, 1, 0.8, 0.7]);
const SYSTEM_PROMPT_RATE = 0.12;
const GREETING_RATE = 0.25;
const GENERIC_SWAP_RATE = 0.2;
const CASUAL_LOWERCASE_RATE = 0.08;
const ACKNOWLEDGEMENT_RATE = 0.3;

let topicCumulativeCache: number[] | undefined;
function topicCumulative(): number[] {
  return (topicCumulativeCache ??= cumulative(TOPICS.map((topic) => topic.weight)));
}

function buildConversation(rng: Rng, ownerCumulative: readonly number[], nowMs: number): DemoConversation {
  const topic = TOPICS[pickWeighted(rng, topicCumulative())] as Topic;
  const scene = new Scene(rng, topic);
  const ownerIndex = pickWeighted(rng, ownerCumulative);
  // Squaring a uniform draw packs ages towards zero: recent weeks are busier than half a year ago.
  const ageMs = WINDOW_MS * rng() ** 2;
  const createdAt = new Date(Math.max(nowMs - WINDOW_MS, Math.floor((nowMs - ageMs) / 1000) * 1000));
  const opening = pick(rng, topic.starts);
  const title = clamp(scene.render(pickTitle(rng, topic, opening)), MAX_TITLE_CHARS);

  // Capped so a long conversation never needs to repeat a generic follow-up.
  const turns = Math.min(
    TURN_COUNTS[pickWeighted(rng, TURN_CUMULATIVE)] as number,
    1 + topic.followUps.length + GENERIC_EXCHANGES.length,
  );
  const messages: DemoMessage[] = [];
  if (rng() < SYSTEM_PROMPT_RATE) {
    messages.push({ role: "system", content: scene.render(pick(rng, SYSTEM_PROMPTS[topic.domain])) });
  }

  const exchanges = planExchanges(scene, opening, turns);
  exchanges.forEach((exchange, turn) => {
    let user = scene.render(exchange.user);
    if (turn === 0 && rng() < GREETING_RATE) user = scene.render(pick(rng, GREETINGS)) + user;
    if (turn > 0 && rng() < ACKNOWLEDGEMENT_RATE && !ACKNOWLEDGED.test(user)) {
      user = scene.render(pick(rng, ACKNOWLEDGEMENTS)) + user;
    }
    if (rng() < CASUAL_LOWERCASE_RATE) user = user.charAt(0).toLowerCase() + user.slice(1);
    messages.push({ role: "user", content: clamp(user, MAX_CONTENT_CHARS) });
    const remainingTurns = exchanges.length - turn - 1;
    const tool = "tool" in exchange ? exchange.tool : undefined;
    if (tool !== undefined && messages.length + 2 + remainingTurns * 2 <= MAX_MESSAGES) {
      messages.push({ role: "tool", content: JSON.stringify(renderJson(scene, tool), null, 2) });
    }
    const answer =
      typeof exchange.assistant === "string" ? scene.render(exchange.assistant) : exchange.assistant(scene);
    messages.push({ role: "assistant", content: clamp(answer, MAX_CONTENT_CHARS) });
  });

  return { title, ownerIndex, createdAt, messages, topic: topic.key };
}

// Auto-titles describe the first question, so an opening's own titles compete with the topic's
// general ones on equal terms.
function pickTitle(rng: Rng, topic: Topic, opening: Exchange): string {
  const own = opening.titles ?? [];
  const index = Math.floor(rng() * (own.length + topic.titles.length));
  const title = index < own.length ? own[index] : topic.titles[index - own.length];
  if (title === undefined) throw new Error(`Topic ${topic.key} has no title for one of its openings`);
  return title;
}

/** The opening exchange, then an order-preserving subset of the topic's follow-ups, topped up with generic ones. */
function planExchanges(scene: Scene, opening: Exchange, turns: number): PlannedTurn[] {
  const { rng, topic } = scene;
  const exchanges: PlannedTurn[] = [opening];
  const wanted = turns - 1;
  const specificCount = Math.min(wanted, topic.followUps.length);
  const chosen = shuffle(
    rng,
    topic.followUps.map((_, index) => index),
  )
    .slice(0, specificCount)
    .sort((a, b) => a - b);
  for (const index of chosen) exchanges.push(topic.followUps[index] as Exchange);
  // Generic turns ("summarize this as a checklist") mostly come at the end, as in real chats.
  const generics = shuffle(rng, GENERIC_EXCHANGES);
  let nextGeneric = 0;
  const takeGeneric = (): PlannedTurn => generics[nextGeneric++ % generics.length] as GenericExchange;
  if (exchanges.length > 1 && rng() < GENERIC_SWAP_RATE) {
    exchanges[1 + Math.floor(rng() * (exchanges.length - 1))] = takeGeneric();
  }
  while (exchanges.length < turns) exchanges.push(takeGeneric());
  return exchanges;
}

function clamp(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  // Never cut between the two halves of a surrogate pair (an emoji, say): that is invalid UTF-16.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end) + "…";
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function sentence(point: string): string {
  const text = capitalize(point);
  return /[.!?)`]$/.test(text) ? text : text + ".";
}

// ---------------------------------------------------------------------------------------------
// Shared vocabulary

// Names and companies deliberately include diacritics so Unicode survives every layer.
const GLOBAL_VARS: Readonly<Record<string, readonly string[]>> = {
  name: ["Priya", "Marco", "Aisha", "Jonas", "Mei", "Tomás", "Olga", "Kwame", "Zoë", "Björn", "Fatima", "Hiroshi", "Chloé", "Diego", "Søren", "Ngozi", "Łukasz", "Inês", "Rahul", "Hannah"],
  manager: ["Sarah", "David", "Elena", "Kenji", "Amara", "Mateo", "Grace", "Yusuf", "Ingrid", "Raphaël"],
  company: ["Northwind", "Brightline", "Kestrel Labs", "Tidewater", "Helio Systems", "Quillpad", "Orbitly", "Fernhill", "Lumen & Co.", "Baltic Freight", "Mosaic Health", "Vantage Bikes"],
  team: ["platform", "payments", "growth", "data", "mobile", "search", "infrastructure", "support tooling", "checkout", "identity"],
  weekday: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
};

const GREETINGS = ["Hi! ", "Hey. ", "Hello! ", "Quick question. ", "Hi there! ", "Good morning! ", "Need some help here. ", "Hey 👋 "];

const ACKNOWLEDGEMENTS = [
  "Thanks. ",
  "OK. ",
  "Makes sense. ",
  "Got it. ",
  "Perfect, thanks! ",
  "Great, that helps. ",
  "Thank you 🙏 ",
  "Cool. ",
  "Nice. ",
  "Understood. ",
];
const ACKNOWLEDGED = /^(thanks|thank|ok|okay|great|perfect|that|this|nice|cool|got|makes|awesome|super|one more)/i;

const SYSTEM_PROMPTS: Readonly<Record<Domain, readonly string[]>> = {
  engineering: [
    "You are a helpful assistant for the {{team}} team at {{company}}. Prefer concrete commands and code, keep changes minimal and safe, and say so when you are unsure.",
    "You are a helpful assistant for software engineers. Answer with working examples, mention version-specific behaviour, and never invent APIs.",
    "You are a senior engineer pairing with a colleague at {{company}}. Be direct, explain the root cause before the fix, and format code in fenced blocks.",
  ],
  data: [
    "You are a helpful assistant for data analysts at {{company}}. Show Python or SQL where useful and point out statistical caveats.",
    "You are a helpful assistant for a machine learning team. Be precise about metrics and say which assumptions your numbers depend on.",
  ],
  writing: [
    "You are a helpful writing assistant. Match the user's tone, keep drafts concise, and offer alternatives for key sentences.",
    "You are a helpful assistant for {{company}}'s marketing and communications team. Write clearly, avoid jargon and clichés.",
  ],
  business: [
    "You are a helpful assistant for {{company}}'s leadership team. Be structured, quantify where possible, and flag assumptions explicitly.",
    "You are a helpful assistant for operations and finance questions. You are not a lawyer or accountant; say when professional advice is needed.",
  ],
  personal: [
    "You are a friendly, practical assistant. Keep suggestions realistic and ask about constraints when they matter.",
    "You are a helpful assistant. Be concise and specific, and use metric units unless asked otherwise.",
  ],
  science: [
    "You are a helpful assistant that explains science clearly and accurately, at the level the user asks for.",
    "You are a helpful assistant for health and science questions. Give general information, not diagnoses, and recommend a qualified professional where appropriate.",
  ],
};

// Topic-independent follow-ups, answered from the topic's key points.
const GENERIC_EXCHANGES: readonly GenericExchange[] = [
  {
    user: "Can you [[sum this up|summarize all of this|condense everything]] as a [[short |quick |]]checklist[[ I can keep| for {{name}}| to share|]]?",
    assistant: (scene) =>
      scene.render("[[Sure|Here you go|Of course]] — [[a checklist|the short version|everything in one list]] for {{subject}}:") +
      "\n\n" +
      scene.points(4, 6).map((point) => `- [ ] ${sentence(point)}`).join("\n") +
      "\n\n" +
      scene.render(
        "[[Work through them in order; the first two catch most of the problems.|If any item doesn't apply to your situation, tell me which and I'll adjust the list.|Happy to expand any of these into more detail.|I left out the background we discussed to keep it short.]]",
      ),
  },
  {
    user: "Can you explain [[it|this|that]] [[like I'm new to this|in plain language|to someone non-technical|more simply]]?[[ My manager {{manager}} asked me about it.| I want to make sure I actually understand it.|]]",
    assistant: (scene) => {
      const [first, second, third] = scene.points(3, 3).map(sentence);
      return (
        scene.render("[[Sure.|No problem.|Happy to.|Of course!]] In plain terms, {{subject}} comes down to [[three|a few]] ideas.") +
        `\n\nFirst: ${first}\n\nSecond: ${second}\n\nAnd third: ${third}\n\n` +
        scene.render(
          "[[Everything else we discussed is a refinement of those.|If you remember those three, you can follow any deeper discussion about it.|That's the core; the rest is detail you can look up when you need it.]] [[Want an analogy as well?|Shall I turn this into a one-paragraph explanation for {{manager}}?|]]",
        )
      );
    },
  },
  {
    user: "Can you draft a [[short |quick |]][[Slack message|message|note]] to {{name}} [[explaining where we landed|with the summary|so they're in the loop]]?",
    assistant: (scene) =>
      scene.render("[[Here's a draft|Draft below|Sure, something like this]]:\n\n> Hi {{name}}! [[Quick update on|Short summary of where we are with|FYI on]] {{subject}}.\n") +
      scene.points(2, 4).map((point) => `> • ${sentence(point)}`).join("\n") +
      scene.render(
        "\n> [[Happy to walk you through it.|Let me know if you have questions.|Shout if anything looks off 🙂|More details in the doc.]]\n\n[[Want a more formal version for email?|I kept it brief; I can add background if they haven't been involved so far.|Adjust the greeting to how you usually write to them.]]",
      ),
  },
  {
    user: "What are the [[most common mistakes|biggest risks|things people usually get wrong]] [[here|with this]]?",
    assistant: (scene) =>
      scene.render(
        "[[Good thing to ask before you commit.|Worth thinking about up front.|Good question.]] Most trouble with {{subject}} comes from skipping the basics rather than from anything exotic, so double-check these:\n\n",
      ) +
      scene.points(3, 4).map((point) => `- ${sentence(point)}`).join("\n") +
      scene.render(
        "\n\n[[The first one is the one I'd verify today.|If you only check one, check the first.|People tend to remember these after the first painful incident — better before.]]",
      ),
  },
  {
    user: "[[Thanks, that's really helpful!|Thank you, this is great.|Super useful, thanks!|Awesome, thanks a lot]][[ 🙏| 🙌| 😊|]]",
    assistant: (scene) => {
      const [tip] = scene.points(1, 1).map(sentence);
      return scene.render(
        "[[You're welcome|Glad it helped|Happy to help|Anytime]]! [[One last tip|One thing worth keeping in mind|If you only remember one thing]]: ",
      ) + `${tip} ` + scene.render("[[Good luck|Let me know how it goes|Feel free to come back if something comes up]][[ 👍|!|.]]");
    },
  },
  {
    user: "Can you make that [[shorter|more concise|a lot shorter]]? [[I need to put it in|It's for|It has to fit in]] [[a status update|an email|the weekly notes|a comment on the ticket]].",
    assistant: (scene) =>
      scene.render("[[Shorter version:|Condensed:|Here's a tighter version:]]\n\n") +
      scene.points(2, 3).map(sentence).join(" ") +
      scene.render("\n\n[[That's the core of it.|That should fit.|Trim the last sentence if you need it even shorter.]]"),
  },
  {
    user: "If I [[could only do one thing|had to prioritize one thing|only have an hour]], what should it be?",
    assistant: (scene) => {
      const [first, second] = scene.points(2, 2).map(sentence);
      return (
        scene.render("[[I'd start here|My pick|Priority one]]: ") +
        `${first}\n\n` +
        scene.render(
          "[[It gives you the most value for the least effort|It's the step people most often regret skipping|Everything else builds on it]][[, and it makes the next steps easier|, and it's quick to do| — the rest can wait]]. ",
        ) +
        `If you get a second slot, do this next: ${second}`
      );
    },
  },
  {
    user: "[[Can you turn this into|I need]] [[a few notes|key takeaways|a short summary]] [[for the team wiki|for our docs|for people who weren't in the discussion]]?",
    assistant: (scene) =>
      scene.render("**[[Key takeaways|Notes|Summary]]: {{subject}}**\n\n") +
      scene
        .points(3, 5)
        .map((point, i) => `${i + 1}. ${sentence(point)}`)
        .join("\n") +
      scene.render(
        "\n\n[[Add a link to this conversation at the bottom so people can find the details.|I kept each point to one line; longer wiki pages rarely get read.|Owner for questions: {{name}}.]]",
      ),
  },
];

// ---------------------------------------------------------------------------------------------
// Topics

const TOPICS: readonly Topic[] = [
  // ------------------------------------------------------------------ software engineering
  {
    key: "postgres-deadlock",
    domain: "engineering",
    weight: 3,
    subject: "the {{service}} deadlock",
    cases: [
      { service: "order", t1: "orders", t2: "order_items" },
      { service: "billing", t1: "invoices", t2: "invoice_lines" },
      { service: "inventory", t1: "stock_levels", t2: "reservations" },
      { service: "payments", t1: "payments", t2: "ledger_entries" },
      { service: "checkout", t1: "carts", t2: "cart_items" },
      { service: "fulfillment", t1: "shipments", t2: "parcels" },
    ],
    vars: {
      pgv: ["14", "15", "16", "17"],
      pid: ["48213", "51877", "39102", "60455", "12984", "22731"],
      xid: ["8812734", "1290331", "40021987", "77310442"],
      orm: ["Prisma", "TypeORM", "SQLAlchemy", "the Django ORM", "node-postgres", "Knex"],
      rate: ["a few times an hour", "about 20 times a day", "only under peak load", "every time the nightly batch runs", "mostly on Mondays when the import job runs"],
    },
    titles: [
      "[[Fixing|Debugging|Resolving]] deadlock in {{service}} service",
      "Postgres deadlock on {{t1}} [[table|updates|batch job]]",
      "[[Debugging|Investigating]] PostgreSQL {{pgv}} deadlocks",
      "Deadlock detected in {{service}} [[updates|transactions|worker|batch job]]",
      "Lock ordering for {{t1}} and {{t2}}",
      "[[Deadlock detected errors|Intermittent deadlocks|40P01 errors]] in {{service}} service",
      "Deadlocks with {{orm}} and Postgres {{pgv}}",
    ],
    starts: [
      {
        user: md`
Our {{service}} service keeps failing with \`ERROR: deadlock detected\` on Postgres {{pgv}}. It happens {{rate}}. The log says:

\`\`\`
ERROR:  deadlock detected
DETAIL:  Process {{pid}} waits for ShareLock on transaction {{xid}}; blocked by process 50112.
Process 50112 waits for ShareLock on transaction 8812731; blocked by process {{pid}}.
HINT:  See server log for query details.
CONTEXT:  while updating tuple (1042,7) in relation "{{t1}}"
\`\`\`

What's the best way to [[track this down|figure out which queries are involved|fix this properly]]?`,
        assistant: md`
A deadlock means two transactions each hold a row lock the other one needs, so Postgres aborts one of them after \`deadlock_timeout\` (1s by default). The fix is almost always to make every code path acquire locks in the same order.

**1. Get both statements into the log.**

\`\`\`sql
ALTER SYSTEM SET log_lock_waits = on;
ALTER SYSTEM SET deadlock_timeout = '200ms';
SELECT pg_reload_conf();
\`\`\`

**2. Look at who is waiting** while it's happening:

\`\`\`sql
SELECT pid, pg_blocking_pids(pid) AS blocked_by, wait_event_type, state, left(query, 80)
FROM pg_stat_activity
WHERE cardinality(pg_blocking_pids(pid)) > 0;
\`\`\`

**3. Check the ordering.** The classic pattern is one transaction doing \`UPDATE {{t1}}\` then \`UPDATE {{t2}}\` while another (often a batch job) goes \`{{t2}}\` → \`{{t1}}\`, or a batch updating rows of \`{{t1}}\` in a different order than single requests do.

**4. Fix it:** sort ids before updating in batches (\`SELECT ... ORDER BY id FOR UPDATE\`) and touch the tables in one fixed order everywhere. [[Keep a retry on SQLSTATE \`40P01\` as a safety net, not as the fix.|A retry on SQLSTATE \`40P01\` is fine as a safety net, but it only hides the problem.]]

If you paste the two statements from the server log I can point at the exact conflict.`,
      },
      {
        user: "[[How do I debug|Can you help me debug|What usually causes]] a Postgres deadlock between two transactions that both touch `{{t1}}` and `{{t2}}`? We use {{orm}} and it started right after we added batch updates to the {{service}} service.",
        assistant: md`
[[The timing is a strong hint.|That it started with the batch updates is the key clue.]] When a batch runs \`UPDATE {{t1}} SET ... WHERE id = ANY($1)\`, Postgres locks rows in whatever order it scans them, while single requests lock them in request order. Two batches with overlapping ids in different orders = deadlock.

What I'd do, in order:

1. **Confirm** with \`log_lock_waits = on\`, and check that the counter climbs:
   \`\`\`sql
   SELECT datname, deadlocks FROM pg_stat_database WHERE datname = current_database();
   \`\`\`
2. **Lock in a deterministic order** at the start of the transaction:
   \`\`\`sql
   SELECT id FROM {{t1}} WHERE id = ANY($1) ORDER BY id FOR UPDATE;
   \`\`\`
3. **Keep transactions short**: no HTTP calls or queue publishes while holding row locks.
4. **Retry** on SQLSTATE \`40P01\` with a little backoff (3 attempts, 50–200 ms).

With {{orm}} you can usually run step 2 as a raw query inside the transaction callback. Want an example?`,
      },
      {
        user: "Getting intermittent deadlocks in production ({{service}} service, PostgreSQL {{pgv}}). Retries mostly hide it but p99 latency went [[from 180ms to 2.4s|through the roof|up about 10x]]. Where do I start?",
        assistant: md`
The latency spike is the retries plus the \`deadlock_timeout\` wait: every deadlock costs at least one second before Postgres even notices it. So it's worth fixing the cause rather than tuning retries.

Start with evidence:

- \`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database();\` — sample it every minute to get a rate.
- Enable \`log_lock_waits\` and set \`deadlock_timeout = '200ms'\` temporarily; the server log then shows both queries and the tuple involved.
- In Grafana (or \`pg_stat_statements\`), find which statements have the highest \`max_exec_time\` — they're usually the ones waiting.

In most {{service}}-style services the culprit is one of:

| Pattern | Fix |
|---|---|
| Batch job updates \`{{t1}}\` rows in random order | \`ORDER BY id FOR UPDATE\` first |
| Path A: \`{{t1}}\` → \`{{t2}}\`, path B: \`{{t2}}\` → \`{{t1}}\` | One fixed table order everywhere |
| Long transaction holding locks during an API call | Move the call outside the transaction |

[[Send me the log lines once you have them and we'll pin it down.|Once you have a log excerpt, paste it here.]]`,
      },
    ],
    followUps: [
      {
        user: "[[That worked|Sorting the ids helped a lot]], but now we [[still see|get]] a few deadlocks per day on `{{t2}}` specifically. The batch inserts rows there too. Can inserts deadlock as well?",
        assistant: md`
Yes — inserts can deadlock too, mostly through **unique indexes and foreign keys**:

- Two transactions inserting the same unique keys in opposite orders wait on each other's uncommitted index entries.
- \`INSERT INTO {{t2}}\` takes a \`FOR KEY SHARE\` lock on the referenced \`{{t1}}\` row. If another transaction updates that parent row's *key* columns, they block each other.

Fixes:

1. Sort the batch by the unique key before inserting (same idea as before).
2. Use \`INSERT ... ON CONFLICT DO NOTHING\` / \`DO UPDATE\` instead of check-then-insert.
3. Don't update columns referenced by the foreign key; updates to non-key columns take \`FOR NO KEY UPDATE\`, which doesn't conflict with \`FOR KEY SHARE\`.

To see which lock modes are involved:

\`\`\`sql
SELECT locktype, relation::regclass, mode, granted, pid
FROM pg_locks WHERE NOT granted;
\`\`\``,
      },
      {
        user: "How would I write the retry around the whole transaction in {{orm}}? [[We're on Node 20.|It's a TypeScript service.|Keep it simple please.]]",
        assistant: md`
A small wrapper that retries only deadlocks (\`40P01\`) and serialization failures (\`40001\`) and rethrows everything else:

\`\`\`ts
const RETRYABLE = new Set(["40P01", "40001"]);

export async function withRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err: any) {
      const code = err?.code ?? err?.meta?.code;
      if (!RETRYABLE.has(code) || attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
    }
  }
}
\`\`\`

Wrap the *whole* transaction, not a single statement: after a deadlock Postgres has already rolled the transaction back, so retrying one query inside it fails with \`current transaction is aborted, commands ignored until end of transaction block\`. Log each retry with the SQLSTATE so you can see on the dashboard whether the ordering fix actually reduced them.`,
      },
      {
        user: "Should I just switch to `SERIALIZABLE` isolation [[to avoid this|instead]]?",
        assistant: md`
I wouldn't. \`SERIALIZABLE\` doesn't prevent lock conflicts; it *adds* serialization failures (SQLSTATE \`40001\`) on top, so you'd retry more, not less. It's the right tool when you need guarantees across reads ("no two bookings may overlap"), not for deadlocks.

For the {{service}} service, \`READ COMMITTED\` (the default) plus consistent lock ordering is the standard answer. If parts of the workload are queue-like — workers grabbing pending rows — \`SELECT ... FOR UPDATE SKIP LOCKED\` is great: a worker just takes a different row instead of waiting.`,
      },
      {
        user: "How can I reproduce it locally to [[prove|make sure]] the fix works?",
        assistant: md`
Two psql sessions are enough to see it:

\`\`\`sql
-- session A
BEGIN;
UPDATE {{t1}} SET updated_at = now() WHERE id = 1;

-- session B
BEGIN;
UPDATE {{t1}} SET updated_at = now() WHERE id = 2;
UPDATE {{t1}} SET updated_at = now() WHERE id = 1;  -- waits

-- session A
UPDATE {{t1}} SET updated_at = now() WHERE id = 2;  -- ERROR: deadlock detected
\`\`\`

For a regression test, run two of your batch functions concurrently with overlapping id lists in opposite order (\`1..500\` and \`500..1\`) in a loop of ~50 iterations. Before the fix you should hit \`40P01\` within a few iterations; after sorting, never.`,
      },
      {
        user: "Can you check our runbooks for what we did last time this happened?",
        tool: {
          tool: "search_docs",
          query: "deadlock {{service}} postgres runbook",
          results: [
            {
              title: "Runbook: {{service}} database incidents",
              url: "https://wiki.internal/runbooks/{{service}}-db",
              snippet: "[[2025-03-14|2025-06-02|2025-09-21]]: deadlocks between {{service}}-api and the nightly reconciliation job. Fix: sort ids in the job, add 40P01 retry. Owner: {{name}}.",
            },
            {
              title: "Postgres on-call cheatsheet",
              url: "https://wiki.internal/oncall/postgres",
              snippet: "pg_blocking_pids(), log_lock_waits, how to kill a stuck backend with pg_terminate_backend(pid)",
            },
          ],
        },
        assistant: md`
Found it. The {{service}} database runbook has an entry for an earlier incident: deadlocks between \`{{service}}-api\` and the nightly reconciliation job, fixed by sorting ids in the job and adding a \`40P01\` retry — {{name}} owned it.

Two things from the on-call cheatsheet worth reusing now:

1. Use \`pg_blocking_pids()\` during the incident to capture the blocking pair before it resolves itself.
2. If a backend is stuck holding locks (e.g. an idle-in-transaction session), \`SELECT pg_terminate_backend(<pid>);\` is the documented way to clear it.

Since the pattern repeats, it may be worth adding a lint or code-review rule: every batch update on \`{{t1}}\` must lock with \`ORDER BY id\`.`,
      },
    ],
    points: [
      "Enable `log_lock_waits` and lower `deadlock_timeout` to 200ms to capture both statements",
      "Use `pg_blocking_pids(pid)` in `pg_stat_activity` to see who blocks whom",
      "Lock rows in a fixed order with `SELECT ... ORDER BY id FOR UPDATE`",
      "Touch `{{t1}}` before `{{t2}}` in every code path",
      "Retry the whole transaction on SQLSTATE 40P01, at most 3 attempts with backoff",
      "Keep transactions short — no network calls while holding row locks",
      "Use `INSERT ... ON CONFLICT` instead of check-then-insert",
      "Put `pg_stat_database.deadlocks` on a dashboard and alert on the rate",
    ],
  },
  {
    key: "kubernetes-autoscaling",
    domain: "engineering",
    weight: 2,
    subject: "autoscaling for {{app}}",
    cases: [
      { app: "checkout-api", ns: "shop" },
      { app: "search-indexer", ns: "search" },
      { app: "image-resizer", ns: "media" },
      { app: "notifications-worker", ns: "comms" },
      { app: "pricing-service", ns: "commerce" },
      { app: "report-generator", ns: "analytics" },
    ],
    vars: {
      minR: ["2", "3", "4"],
      maxR: ["10", "20", "30", "50"],
      cpuTarget: ["60", "70", "75", "80"],
      k8sv: ["1.28", "1.29", "1.30", "1.31"],
      cloud: ["EKS", "GKE", "AKS", "a self-managed k3s cluster"],
    },
    titles: [
      "Kubernetes autoscaling for {{app}}[[| on {{cloud}}]]",
      "Horizontal Pod Autoscaler on {{cloud}}[[| (k8s {{k8sv}})]]",
      "[[HPA|Autoscaling]] setup for {{app}} in {{ns}}",
    ],
    starts: [
      {
        titles: [
          "HPA not scaling {{app}}",
          "HPA shows <unknown> CPU target[[| in {{ns}}]]",
          "[[Fixing|Debugging]] HPA <unknown> metrics for {{app}}",
        ],
        user: md`
Our HPA for \`{{app}}\` never scales up. \`kubectl get hpa -n {{ns}}\` shows:

\`\`\`
NAME            REFERENCE                 TARGETS              MINPODS   MAXPODS   REPLICAS   AGE
{{app}}   Deployment/{{app}}   <unknown>/{{cpuTarget}}%   {{minR}}         {{maxR}}        {{minR}}          3d
\`\`\`

We're on {{cloud}}, Kubernetes {{k8sv}}. What am I missing?`,
        assistant: md`
\`<unknown>\` in TARGETS means the HPA can't read metrics, so it never acts. There are two usual causes.

**1. metrics-server is missing or unhealthy**

\`\`\`bash
kubectl get apiservice v1beta1.metrics.k8s.io
kubectl top pods -n {{ns}}
\`\`\`

If \`kubectl top\` fails with \`error: Metrics API not available\`, install or repair metrics-server ([[on {{cloud}} it's usually an add-on|check the add-on settings of your cluster]]).

**2. The containers have no CPU requests.** Utilization is a percentage *of the request*, so without \`resources.requests.cpu\` there's nothing to divide by:

\`\`\`yaml
resources:
  requests:
    cpu: 250m
    memory: 256Mi
  limits:
    memory: 512Mi
\`\`\`

After adding requests, \`kubectl describe hpa {{app}} -n {{ns}}\` should show something like \`cpu: 34% (85m) / {{cpuTarget}}%\` within a minute. The Events at the bottom of \`describe\` usually name the exact problem, e.g. \`FailedGetResourceMetric\`.`,
      },
      {
        titles: [
          "Scaling {{app}} on [[CPU|queue length|requests per second]]",
          "Autoscaling plan for {{app}}",
        ],
        user: "How should I set up autoscaling for `{{app}}`? It's [[CPU-heavy during the day and idle at night|spiky: traffic jumps 5x when marketing emails go out|a worker that reads from a queue]]. Currently it's fixed at {{minR}} replicas on {{cloud}}.",
        assistant: md`
A solid starting point is an \`autoscaling/v2\` HPA on CPU, with a scale-down stabilization window so it doesn't flap:

\`\`\`yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{app}}
  namespace: {{ns}}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{app}}
  minReplicas: {{minR}}
  maxReplicas: {{maxR}}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{cpuTarget}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 300
      policies:
        - type: Percent
          value: 50
          periodSeconds: 60
\`\`\`

Notes:
- Set realistic CPU **requests** first — the target is relative to them.
- [[For a queue worker, CPU is a poor signal; scale on queue depth with KEDA or an external metric instead.|If the spikes are sudden, scale-up can lag by 30–60s; keep a little headroom in \`minReplicas\`.]]
- Make sure the cluster autoscaler (or Karpenter) can add nodes, otherwise new pods just sit in \`Pending\`.`,
      },
      {
        titles: [
          "[[Stop|Stopping|Fixing]] HPA flapping [[in {{ns}} namespace|for {{app}}]]",
          "HPA scale-down stabilization for {{app}}",
        ],
        user: "`{{app}}` scales up fine but then flaps — up to {{maxR}}, down to {{minR}}, back up, every few minutes. Is there a way to [[stabilize|dampen]] the HPA?",
        assistant: md`
Yes — that's what the \`behavior\` section in \`autoscaling/v2\` is for. Flapping usually means scale-down reacts too fast, so the load per pod jumps right after pods are removed.

\`\`\`yaml
behavior:
  scaleUp:
    stabilizationWindowSeconds: 0
    policies:
      - type: Pods
        value: 4
        periodSeconds: 60
  scaleDown:
    stabilizationWindowSeconds: 600
    policies:
      - type: Percent
        value: 20
        periodSeconds: 120
\`\`\`

This scales up immediately (max 4 pods/minute) but only scales down after 10 minutes of consistently lower load, and by at most 20% every 2 minutes.

Also check:
- **Slow startup**: if pods need 40s to warm up and count toward the average immediately, add a readiness probe with a realistic \`initialDelaySeconds\`.
- **Target too tight**: {{cpuTarget}}% average with bursty traffic leaves no headroom; [[60%|65%]] is often calmer.`,
      },
    ],
    followUps: [
      {
        user: "[[That helped|OK, that's in place|Applied that]]. Now it scales, but new pods stay `Pending` for minutes when it goes past [[8|12|15]] replicas.",
        assistant: md`
Then the HPA is doing its job and the **cluster** is out of room. \`kubectl describe pod <pending-pod> -n {{ns}}\` will say something like:

\`\`\`
Warning  FailedScheduling  0/6 nodes are available: 6 Insufficient cpu.
\`\`\`

Options:
1. **Cluster autoscaler / Karpenter**: make sure it's enabled for the node group and its max size isn't already reached.
2. **Over-provisioning**: run a low-priority "pause" deployment that reserves ~1 node of headroom; real pods preempt it instantly while a new node boots.
3. **Right-size requests**: if pods request \`1000m\` but use 200m, you pack 5x fewer pods than you could. \`kubectl top pods\` over a day tells you the real usage.

Node provisioning on {{cloud}} usually takes 1–3 minutes, so option 2 is what removes the wait.`,
      },
      {
        user: "Can we scale on requests per second instead of CPU? We have Prometheus.",
        assistant: md`
Yes, via the Prometheus Adapter (or KEDA's Prometheus scaler). With the adapter, expose a per-pod metric and target an average value:

\`\`\`yaml
metrics:
  - type: Pods
    pods:
      metric:
        name: http_requests_per_second
      target:
        type: AverageValue
        averageValue: "[[50|80|120]]"
\`\`\`

Adapter rule:

\`\`\`yaml
rules:
  - seriesQuery: 'http_requests_total{namespace!="",pod!=""}'
    resources:
      overrides:
        namespace: { resource: namespace }
        pod: { resource: pod }
    name:
      matches: "^(.*)_total$"
      as: "\${1}_per_second"
    metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)'
\`\`\`

Check it works with \`kubectl get --raw "/apis/custom.metrics.k8s.io/v1beta1/namespaces/{{ns}}/pods/*/http_requests_per_second"\`. Pick the target from a load test: the RPS at which one pod's p95 latency starts to climb, minus ~30%.`,
      },
      {
        user: "What about the VPA — should we use it together with the HPA?",
        assistant: md`
Not on the same metric. If the VPA changes CPU requests while the HPA scales on CPU *utilization* (which is relative to requests), they fight: VPA raises requests → utilization drops → HPA scales in → utilization rises → VPA raises again.

Safe combinations:
- **HPA on CPU + VPA in \`updateMode: "Off"\`**: use the VPA only for recommendations, and copy them into the manifest now and then. This is what most teams do.
- **HPA on a custom metric (RPS, queue depth) + VPA in \`Auto\`**: fine, because the HPA no longer depends on requests.

\`kubectl describe vpa {{app}} -n {{ns}}\` shows the \`Target\` and \`Upper Bound\` recommendations after a day or so of traffic.`,
      },
      {
        user: "How do I load test this to see the HPA react before we go live?",
        assistant: md`
Something like k6 against a staging copy works well:

\`\`\`js
import http from "k6/http";
export const options = {
  stages: [
    { duration: "2m", target: 50 },
    { duration: "5m", target: 400 },
    { duration: "5m", target: 400 },
    { duration: "3m", target: 0 },
  ],
};
export default function () {
  http.get("https://staging.example.com/{{app}}/health/deep");
}
\`\`\`

In a second terminal: \`kubectl get hpa {{app}} -n {{ns}} -w\`. You want to see replicas grow within ~1 minute of the ramp, p95 latency stay flat in k6's summary, and scale-down only after the stabilization window. If latency spikes before new pods are ready, lower the CPU target or raise \`minReplicas\`.`,
      },
    ],
    points: [
      "Set CPU requests on every container; utilization is relative to them",
      "Check metrics-server with `kubectl top pods -n {{ns}}`",
      "Use `autoscaling/v2` with a scale-down stabilization window of 5–10 minutes",
      "Read the Events in `kubectl describe hpa {{app}}` first",
      "Make sure the cluster autoscaler can add nodes, or pods stay Pending",
      "Scale queue workers on queue depth (KEDA) rather than CPU",
      "Don't run VPA in Auto mode on the same metric as the HPA",
      "Load test with k6 while watching `kubectl get hpa -w`",
    ],
  },
  {
    key: "react-state-management",
    domain: "engineering",
    weight: 2,
    subject: "state management in the {{feature}}",
    vars: {
      feature: ["checkout flow", "settings page", "dashboard", "onboarding wizard", "product editor", "chat sidebar"],
      reactv: ["18.3", "19"],
      lib: ["Redux Toolkit", "Zustand", "Jotai", "MobX"],
      count: ["12", "20", "30+", "about 40"],
    },
    titles: [
      "React state management for [[the |]]{{feature}}",
    ],
    starts: [
      {
        titles: [
          "Context vs {{lib}} for {{feature}}",
          "Prop drilling in [[React |]]{{feature}}",
          "[[Choosing|Picking]] {{lib}} for a React {{reactv}} app",
          "Organizing state in the {{feature}}",
        ],
        user: "We're building [[our|the]] {{feature}} in React {{reactv}} and the state is getting messy — {{count}} `useState` calls, props passed down four levels. Should we move to {{lib}} or is Context enough?",
        assistant: md`
Before picking a library, split the state by *kind* — most of the mess usually disappears:

1. **Server state** (data fetched from the API): use TanStack Query or SWR. It handles caching, refetching and loading/error states, and typically removes half of the \`useState\`/\`useEffect\` pairs.
2. **URL state** (filters, selected tab, page): keep it in the URL via the router's search params, so it survives reloads and can be shared.
3. **Form state**: React Hook Form or a single \`useReducer\` per form.
4. **Truly global UI state** (current user, theme, a cart): *this* is the part for Context or {{lib}}.

After that split, if what's left is small and changes rarely, Context is enough. Context's weakness is that every consumer re-renders when the value changes, so for frequently changing global state (e.g. a live cart total read by 15 components) a store with selectors like [[Zustand|{{lib}}]] is nicer:

\`\`\`ts
const useCart = create<CartState>((set) => ({
  items: [],
  add: (item) => set((s) => ({ items: [...s.items, item] })),
}));
const count = useCart((s) => s.items.length); // re-renders only when the count changes
\`\`\`

Want to go through the {{feature}}'s state and sort each piece into those buckets?`,
      },
      {
        titles: [
          "Too many re-renders in {{feature}}",
          "[[Fixing|Debugging]] 'Too many re-renders' error",
          "Derived state in the {{feature}} summary",
        ],
        user: md`
[[I get|Getting|React throws]] "Too many re-renders. React limits the number of renders to prevent an infinite loop." in our {{feature}}[[ on React {{reactv}}|]]. [[The component looks roughly like this|Simplified component|Here's the component]]:

\`\`\`tsx
function Summary({ items }) {
  const [total, setTotal] = useState(0);
  setTotal(items.reduce((sum, i) => sum + i.price, 0));
  return <p>Total: {total}</p>;
}
\`\`\``,
        assistant: md`
The \`setTotal(...)\` call runs during render: setting state triggers a render, which sets state again, and so on. But you don't need state here at all — \`total\` is **derived** from props, so compute it during render:

\`\`\`tsx
function Summary({ items }: { items: Item[] }) {
  const total = items.reduce((sum, i) => sum + i.price, 0);
  return <p>Total: {total.toFixed(2)}</p>;
}
\`\`\`

If the computation were expensive (thousands of items), wrap it in \`useMemo\`:

\`\`\`tsx
const total = useMemo(() => items.reduce((sum, i) => sum + i.price, 0), [items]);
\`\`\`

Rule of thumb: if a value can be calculated from props or other state, it shouldn't be state. Copying props into state is the most common source of both infinite loops and stale UI.`,
      },
      {
        titles: [
          "useEffect infinite loop in {{feature}}",
          "useEffect [[fetch loop|runs forever]] in {{feature}}",
          "Where to keep server state in React {{reactv}}",
        ],
        user: "[[Our|A]] `useEffect` that fetches data in the {{feature}} runs in an endless loop[[ and hammers the API|, hundreds of requests per second|]]. [[The dependency array has a filters object in it.|We pass an options object into the effect's deps.]] [[What's the clean fix?|How do I fix it properly?|Should I just remove the dependency?]]",
        assistant: md`
Objects created during render are new on every render, so \`[filters]\` changes every time, the effect runs, sets state, re-renders, creates a new \`filters\`... loop.

Fixes, from best to okay:

1. **Depend on primitives** instead of the object:
   \`\`\`tsx
   useEffect(() => { load({ status, page }); }, [status, page]);
   \`\`\`
2. **Memoize the object** where it's created:
   \`\`\`tsx
   const filters = useMemo(() => ({ status, page }), [status, page]);
   \`\`\`
3. **Move fetching out of effects** entirely with TanStack Query, where the object becomes part of the query key and is compared by value:
   \`\`\`tsx
   const { data, isPending } = useQuery({
     queryKey: ["orders", { status, page }],
     queryFn: () => fetchOrders({ status, page }),
   });
   \`\`\`

Option 3 also gives you caching, deduplication and cancellation of stale requests for free — in React {{reactv}} that's the recommended direction anyway.`,
      },
    ],
    followUps: [
      {
        user: "[[We're moving the global state of the {{feature}} to {{lib}}.|Related: we use {{lib}} for global state.]] How do I stop every component from re-rendering when one field changes?",
        assistant: md`
Select the smallest slice each component needs, and keep selectors returning primitives or stable references:

\`\`\`ts
// re-renders on any change
const state = useStore();
// re-renders only when the name changes
const name = useStore((s) => s.profile.name);
\`\`\`

If a selector returns a new object or array each time (\`s.items.filter(...)\`), pass an equality function (\`shallow\` in Zustand, \`shallowEqual\` in React-Redux) or memoize the selector (\`createSelector\` in Redux Toolkit).

To verify: React DevTools → Profiler → "Record why each component rendered". You should see "Hook 2 changed" only in the components that actually use the changed field.`,
      },
      {
        user: "How do I test a component that reads from the store?",
        assistant: md`
Render it with a real store seeded for the test rather than mocking the hook — tests stay closer to reality and survive refactors:

\`\`\`tsx
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";

test("adds an item", async () => {
  useCart.setState({ items: [] }); // reset between tests
  render(<AddToCart productId="sku-123" />);
  await userEvent.click(screen.getByRole("button", { name: /add to cart/i }));
  expect(useCart.getState().items).toHaveLength(1);
});
\`\`\`

For Redux Toolkit, create a fresh store per test with \`configureStore({ reducer, preloadedState })\` and wrap the component in \`<Provider store={store}>\`. Avoid asserting on internal state where you can assert on what the user sees.`,
      },
      {
        user: "Is it okay to keep the form state for the {{feature}} in the global store too?",
        assistant: md`
Usually not. Form state is local, high-frequency (every keystroke) and thrown away on submit — putting it in a global store means every keystroke goes through the store and can re-render unrelated subscribers.

Keep the form local (React Hook Form, or \`useReducer\`), and only write to the global store on submit or on meaningful milestones — e.g. a wizard step completing. Exception: if the {{feature}} must survive navigation or a reload (a long multi-step wizard), persist a *draft* to the store or \`localStorage\`, debounced to something like 500 ms.`,
      },
      {
        user: "Any difference in how this works with React 19 and Server Components?",
        assistant: md`
A few things change:

- **Server Components can't use state or context at all.** State lives in Client Components (\`"use client"\`), so keep providers and stores in a small client layout wrapper near the leaves.
- **Data fetching moves to the server**: in a Server Component you simply \`await\` the data, which replaces a lot of server state that used to live in client caches.
- **Actions and \`useActionState\`** cover many form-submission cases that used to need manual loading/error state.
- A store created at module level is shared across requests *on the server* — create it per request (e.g. inside a provider with \`useRef\`) to avoid leaking one user's data to another.

Since the {{feature}} is mostly interactive, the client-side approach we discussed stays the same.`,
      },
    ],
    points: [
      "Separate server state, URL state, form state and global UI state",
      "Use TanStack Query or SWR for data fetched from the API",
      "Don't copy props into state; derive values during render",
      "Depend on primitives in `useEffect` deps, not objects created during render",
      "Select the smallest slice of the store in each component",
      "Keep form state local and write to the store on submit",
      "Check unnecessary renders with the React DevTools Profiler",
    ],
  },
  {
    key: "typescript-generics",
    domain: "engineering",
    weight: 2,
    subject: "TypeScript generics",
    vars: {
      tsv: ["5.4", "5.5", "5.6", "5.8", "5.9"],
      fn: ["groupBy", "pluck", "mapValues", "indexBy", "pickFields"],
      entity: ["User", "Order", "Invoice", "Product", "Ticket"],
    },
    titles: [
      "TypeScript {{tsv}} generics [[question|help]]",
    ],
    starts: [
      {
        titles: [
          "TypeScript generic constraint error[[| in {{fn}}]]",
          "TS2322 [[with generics|error]] in {{fn}}[[| (TS {{tsv}})]]",
          "Fixing 'could be instantiated with [[a different subtype|an arbitrary type]]'",
          "Typing a generic {{fn}} [[function|helper]]",
        ],
        user: md`
I'm writing a generic \`{{fn}}\` helper in TypeScript {{tsv}} and get this error:

\`\`\`
error TS2322: Type 'Record<string, unknown>' is not assignable to type 'T'.
  'T' could be instantiated with an arbitrary type which could be unrelated to 'Record<string, unknown>'.
\`\`\`

[[What does that actually mean?|How do I fix it without casting to any?|Why can't TS figure this out?]]`,
        assistant: md`
The message means: inside the function you only know \`T extends Record<string, unknown>\` (or similar), but the *caller* chooses \`T\`. It could be \`{ id: number; name: string }\`, and an arbitrary \`Record<string, unknown>\` you built isn't guaranteed to have those exact properties. So returning it as \`T\` would be unsound.

Usually the fix is to type the result as what you actually construct, not as \`T\`:

\`\`\`ts
function {{fn}}<T, K extends keyof T>(items: readonly T[], key: K): Record<string, T[]> {
  const result: Record<string, T[]> = {};
  for (const item of items) {
    const bucket = String(item[key]);
    (result[bucket] ??= []).push(item);
  }
  return result;
}

const byStatus = {{fn}}(orders, "status"); // Record<string, Order[]>
\`\`\`

Two rules that avoid most TS2322s with generics:
1. Return types should be built *from* \`T\` (\`T[]\`, \`Pick<T, K>\`, \`Partial<T>\`), not be \`T\` itself unless you return an input.
2. Use \`K extends keyof T\` so the key is checked at the call site — \`{{fn}}(orders, "stauts")\` then fails with a helpful error.`,
      },
      {
        titles: [
          "[[Typing|Type-safe]] pick function for {{entity}}[[| objects]]",
          "[[Pick|Picking keys]] with generics for {{entity}}",
          "keyof [[and generics|with generic keys]] in TypeScript {{tsv}}",
        ],
        user: "[[How do I type|What's the right way to type|How should I type]] a function that takes an object and a list of keys and returns an object with just those keys? [[Like lodash pick.|For our {{entity}} API responses.]]",
        assistant: md`
\`Pick<T, K>\` plus a \`K extends keyof T\` constraint does it:

\`\`\`ts
function pickFields<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Pick<T, K> {
  const result = {} as Pick<T, K>;
  for (const key of keys) result[key] = obj[key];
  return result;
}

const slim = pickFields(user, ["id", "email"] as const);
//    ^? Pick<{{entity}}, "id" | "email">
\`\`\`

The \`as Pick<T, K>\` on the empty object is one of the few acceptable assertions: TypeScript can't track that the loop fills every key. Everything the caller sees stays fully typed, and a typo like \`"emial"\` is a compile error.

If you're on TypeScript 5.0+ you can write \`<const K extends keyof T>\` to infer the literal keys without \`as const\` at the call site.`,
      },
      {
        titles: [
          "Literal type [[inference|widening]] in TS {{tsv}}",
          "Keeping literal types in generic [[functions|return types]]",
          "const type parameters in TypeScript {{tsv}}",
        ],
        user: "Why does TypeScript {{tsv}} infer `string` instead of the literal `\"draft\" | \"published\"` when I call my generic function? [[I want the return type to keep the literal.|The literal type gets lost.|Can I keep the literal type?]]",
        assistant: md`
By default, generic inference *widens* literals when they're not in a position that obviously needs them. You have three ways to keep them:

\`\`\`ts
// 1. const type parameter (TS 5.0+) — cleanest
function makeState<const S extends string>(initial: S) {
  return { value: initial };
}
const s = makeState("draft"); // { value: "draft" }

// 2. constrain to a union
type Status = "draft" | "published";
function setStatus<S extends Status>(s: S): S { return s; }

// 3. as const at the call site
const statuses = ["draft", "published"] as const; // readonly ["draft", "published"]
\`\`\`

Option 1 is the one I'd use in {{tsv}}. It also works for objects and arrays: \`<const T>\` turns \`{ a: [1, 2] }\` into \`{ readonly a: readonly [1, 2] }\`.`,
      },
    ],
    followUps: [
      {
        user: "That compiles now[[, thanks|]]. But when I pass a union type, the result type becomes weird. Is that distributive conditional types?",
        assistant: md`
Probably, yes. A conditional type with a naked type parameter distributes over unions:

\`\`\`ts
type ToArray<T> = T extends unknown ? T[] : never;
type A = ToArray<string | number>; // string[] | number[]  (distributed)

type ToArrayNonDist<T> = [T] extends [unknown] ? T[] : never;
type B = ToArrayNonDist<string | number>; // (string | number)[]
\`\`\`

Wrapping both sides in a one-element tuple (\`[T] extends [U]\`) turns distribution off. Which one you want depends on the semantics: "an array of each kind" vs "an array of mixed things". For {{fn}} over \`{{entity}}[]\` you almost always want the non-distributive version.`,
      },
      {
        user: "Is `as` ever fine in generic code, or should I always avoid it?",
        assistant: md`
Avoid it where the compiler could check the code, accept it where it can't. Reasonable uses:

- Building up an object key by key (\`{} as Pick<T, K>\`) — TS can't follow the loop.
- \`Object.keys(obj) as (keyof T)[]\` — \`Object.keys\` deliberately returns \`string[]\` because objects can have extra keys at runtime.
- Narrowing after a runtime check you've written yourself (better: a type guard \`function isOrder(x: unknown): x is Order\`).

Red flags: \`as any\`, \`as unknown as T\`, and assertions on API responses. For external data, validate instead (zod, valibot, or a hand-written guard) so the type is *earned* at runtime.`,
      },
      {
        user: "Can you explain `infer` with a practical example?",
        assistant: md`
\`infer\` lets you pull a type out of another type inside a conditional type. Practical examples:

\`\`\`ts
// The element type of an array
type ElementOf<T> = T extends readonly (infer E)[] ? E : never;
type X = ElementOf<{{entity}}[]>; // {{entity}}

// What a promise resolves to (the built-in Awaited does this recursively)
type Unwrap<T> = T extends Promise<infer V> ? V : T;

// The props of a React component
type PropsOf<C> = C extends React.ComponentType<infer P> ? P : never;

// The first argument of a function
type FirstArg<F> = F extends (first: infer A, ...rest: any[]) => any ? A : never;
\`\`\`

Read it as pattern matching: "if \`T\` looks like \`Promise<something>\`, call that something \`V\` and give it to me".`,
      },
    ],
    points: [
      "Use `K extends keyof T` so keys are checked at the call site",
      "Return types built from `T` (`Pick<T, K>`, `T[]`), not `T` itself",
      "Use `const` type parameters to keep literal types",
      "Wrap in `[T] extends [U]` to stop distributive conditional types",
      "Validate external data instead of asserting its type",
      "Reserve `as` for cases the compiler genuinely cannot follow",
    ],
  },
  {
    key: "graphql-federation",
    domain: "engineering",
    weight: 2,
    subject: "the federation setup",
    cases: [
      { entity: "Product", sub1: "catalog", sub2: "reviews", field: "reviews" },
      { entity: "User", sub1: "accounts", sub2: "orders", field: "orders" },
      { entity: "Conversation", sub1: "conversations", sub2: "search", field: "relevance" },
      { entity: "Order", sub1: "orders", sub2: "shipping", field: "deliveryEstimate" },
      { entity: "Document", sub1: "knowledge", sub2: "permissions", field: "viewers" },
    ],
    vars: {
      router: ["Apollo Router", "Hive Gateway", "Cosmo Router", "Apollo Gateway"],
      fedv: ["2.3", "2.5", "2.7", "2.9"],
    },
    titles: [
      "GraphQL federation: {{entity}} entity across subgraphs",
      "Federation {{fedv}} entity ownership",
    ],
    starts: [
      {
        titles: [
          "Adding {{field}} to {{entity}} from {{sub2}}",
          "Setting up {{router}} [[for two subgraphs|with {{sub1}} and {{sub2}}]]",
          "Federation @key and reference resolvers[[| for {{entity}}]]",
        ],
        user: "We're [[splitting our GraphQL API into subgraphs|moving from a monolithic GraphQL server to federation|adding a second subgraph behind {{router}}]]. The `{{entity}}` type lives in the `{{sub1}}` subgraph, but the `{{sub2}}` subgraph needs to add a `{{field}}` field to it. How do I do that in Federation {{fedv}}?",
        assistant: md`
Make \`{{entity}}\` an **entity** with a \`@key\` in both subgraphs. The \`{{sub1}}\` subgraph owns the core fields; \`{{sub2}}\` contributes \`{{field}}\`.

\`\`\`graphql
# {{sub1}} subgraph
extend schema @link(url: "https://specs.apollo.dev/federation/v{{fedv}}", import: ["@key"])

type {{entity}} @key(fields: "id") {
  id: ID!
  name: String!
}
\`\`\`

\`\`\`graphql
# {{sub2}} subgraph
extend schema @link(url: "https://specs.apollo.dev/federation/v{{fedv}}", import: ["@key"])

type {{entity}} @key(fields: "id") {
  id: ID!
  {{field}}: [String!]!   # adjust to the real type
}
\`\`\`

In \`{{sub2}}\`, add a reference resolver so the router can hand it an \`{ id }\` and get the entity back:

\`\`\`ts
const resolvers = {
  {{entity}}: {
    __resolveReference: (ref: { id: string }, ctx: Context) => ctx.loaders.{{sub2}}ById.load(ref.id),
  },
};
\`\`\`

The router ({{router}} in your case) then plans queries like \`{ {{entity}}(id: 1) { name {{field}} } }\` as: fetch from \`{{sub1}}\`, then an \`_entities\` call to \`{{sub2}}\` with the ids.`,
      },
      {
        titles: [
          "Composition error in {{sub2}} subgraph",
          "INVALID_FIELD_SHARING on {{entity}}.name",
          "[[Fixing|Resolving]] @shareable composition error",
        ],
        user: md`
[[Composition fails|Our supergraph build breaks|{{router}} composition errors out]] after I added a field in the {{sub2}} subgraph:

\`\`\`
INVALID_FIELD_SHARING: Non-shareable field "{{entity}}.name" is resolved from multiple subgraphs: it is resolved from subgraphs "{{sub1}}" and "{{sub2}}" and defined as non-shareable in all of them
\`\`\`

[[What's the right way to fix this?|Should I just add @shareable everywhere?|How do I fix this without breaking clients?]]`,
        assistant: md`
In Federation 2 a field may only be resolved by one subgraph unless every subgraph that defines it marks it \`@shareable\`. You have \`{{entity}}.name\` in both \`{{sub1}}\` and \`{{sub2}}\`.

Pick one of:

1. **Only one subgraph should own it** (usually right): remove \`name\` from \`{{sub2}}\`. If \`{{sub2}}\` needs the value for computing something, use \`@external\` + \`@requires\`:
   \`\`\`graphql
   type {{entity}} @key(fields: "id") {
     id: ID!
     name: String! @external
     {{field}}: String @requires(fields: "name")
   }
   \`\`\`
2. **Both really can resolve it identically** (e.g. it's denormalized in both databases): mark it shareable in *both* subgraphs:
   \`\`\`graphql
   name: String! @shareable
   \`\`\`

Be careful with option 2: the router may fetch \`name\` from either subgraph, so they must always return the same value. Run \`rover supergraph compose\` (or your router's composition step) in CI so these errors show up in the pull request rather than at deploy time.`,
      },
      {
        titles: [
          "N+1 in __resolveReference for {{entity}}",
          "Batching entity lookups in {{sub2}}",
          "Slow federated query for {{entity}} list",
        ],
        user: "Our [[gateway|{{router}}]] is slow: a query for [[50|100|20]] `{{entity}}` items makes 50 separate database calls in the {{sub2}} subgraph. [[Is that normal for federation?|How do I batch __resolveReference?]]",
        assistant: md`
It's the classic N+1, and it's on the subgraph side: the router sends **one** \`_entities\` request with 50 representations, but \`__resolveReference\` is called once per representation. Batch those calls with DataLoader, created per request:

\`\`\`ts
import DataLoader from "dataloader";

export function createLoaders(db: Db) {
  return {
    {{sub2}}ById: new DataLoader<string, Row | null>(async (ids) => {
      const rows = await db.query("SELECT * FROM {{sub2}} WHERE entity_id = ANY($1)", [ids]);
      const byId = new Map(rows.map((r) => [r.entity_id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  };
}

// context factory: new loaders for every request, never shared between users
context: async ({ req }) => ({ loaders: createLoaders(db), user: await authenticate(req) }),
\`\`\`

Two details that matter: return results **in the same order as the ids**, and return \`null\` (not throw) for missing ones. After this, the 50 items become 1 query — you can confirm in the router's query plan / tracing that the \`{{sub2}}\` fetch is a single call.`,
      },
    ],
    followUps: [
      {
        user: "How do I pass the authenticated user from the gateway to the subgraphs?",
        assistant: md`
Authenticate once at the router and forward either the original token or trusted claims as headers.

- **Forward the JWT** (simplest and most secure): each subgraph verifies it again with the same JWKS. With {{router}} that's a header propagation rule for \`authorization\`.
- **Forward claims** (\`x-user-id\`, \`x-tenant-id\`): only if subgraphs are unreachable except through the router (network policy / mTLS), otherwise anyone can spoof the header.

In the subgraph context:

\`\`\`ts
context: async ({ req }) => {
  const token = req.headers.authorization?.replace(/^Bearer /, "");
  const claims = token ? await verifyJwt(token) : null;
  return { userId: claims?.sub ?? null, tenantId: claims?.org_id ?? null, loaders: createLoaders(db) };
},
\`\`\`

And enforce tenant filtering in every resolver, including \`__resolveReference\` — it's a common hole, because entity lookups bypass your normal query resolvers.`,
      },
      {
        user: "What's the best way to test composition and query plans in CI?",
        tool: {
          tool: "search_docs",
          query: "supergraph composition CI check",
          results: [
            { title: "Composing a supergraph locally", url: "https://the-guild.dev/graphql/hive/docs/gateway/supergraph-proxy-source", snippet: "Compose subgraph SDLs into a supergraph SDL and serve it with the gateway..." },
            { title: "Schema checks", url: "https://www.apollographql.com/docs/graphos/platform/schema-management/checks", snippet: "Run composition and operation checks against recent traffic before publishing a subgraph schema." },
          ],
        },
        assistant: md`
Three layers work well:

1. **Composition check** on every PR: compose all subgraph SDLs into a supergraph (\`rover supergraph compose --config supergraph.yaml\`, or \`@theguild/federation-composition\`'s \`composeServices\` in a small script) and fail on errors.
2. **Breaking-change check**: diff the new supergraph against production (\`graphql-inspector diff\` or your registry's schema checks) — removing \`{{entity}}.{{field}}\` while clients still query it should fail the build.
3. **End-to-end tests through the gateway**: start the subgraphs and the router in-process and run real queries that cross subgraphs, e.g. fetch \`{{entity}}\` with \`{{field}}\`. That's the only layer that catches broken \`__resolveReference\` implementations.

Snapshotting the query plan for a handful of important operations is also useful: if a change suddenly adds a third fetch, you'll see it in review.`,
      },
      {
        user: "Should every subgraph get its own database, or can two subgraphs share one?",
        assistant: md`
Sharing a database is fine as a stepping stone, but it undermines the point of subgraphs: if \`{{sub1}}\` and \`{{sub2}}\` read each other's tables, a migration in one can break the other without any schema change showing up in composition.

A pragmatic rule:
- **Separate schemas (or databases) per subgraph**, each subgraph owning its tables.
- Cross-subgraph data flows through **entities** (\`@key\` references), not joins.
- If a subgraph needs a copy of another's data for filtering or search (e.g. \`{{sub2}}\` ranking by \`{{entity}}.name\`), sync it via events and accept eventual consistency.

Starting with one Postgres instance and one schema per subgraph is a cheap way to get most of the benefits.`,
      },
    ],
    points: [
      "Declare `@key(fields: \"id\")` on the entity in every subgraph that contributes fields",
      "Implement `__resolveReference` in each contributing subgraph",
      "Batch entity lookups with a per-request DataLoader",
      "Mark a field `@shareable` only if all subgraphs resolve it identically",
      "Use `@external` with `@requires` to compute fields from another subgraph's data",
      "Run supergraph composition in CI on every pull request",
      "Enforce tenant filtering inside `__resolveReference` too",
    ],
  },
  {
    key: "ci-flaky-tests",
    domain: "engineering",
    weight: 2,
    subject: "the flaky CI tests",
    vars: {
      ci: ["GitHub Actions", "GitLab CI", "CircleCI", "Buildkite"],
      runner: ["Jest", "Vitest", "pytest", "Playwright", "Cypress", "Go test"],
      failRate: ["1 in 10", "about 5% of", "maybe 1 in 20", "a third of"],
      testName: ["creates an invoice and sends email", "renders the dashboard after login", "syncs orders from the webhook", "retries failed uploads", "exports CSV with unicode names"],
    },
    titles: [
      "Flaky tests in {{ci}}",
      "Passes locally, fails in {{ci}}",
    ],
    starts: [
      {
        titles: [
          "{{runner}} test fails randomly in CI",
          "Tracking down flaky {{runner}} tests",
          "CI [[timeout|flake]] on '{{testName}}'",
        ],
        user: "Our test \"{{testName}}\" fails in {{ci}} {{failRate}} runs but never locally. It's {{runner}}. [[How do I even start debugging this?|Any systematic way to find the cause?|I'm tired of clicking re-run.]]",
        assistant: md`
Flakes that only happen in CI usually come from one of five things: **timing, shared state, test order, environment, or resource limits**. CI machines are slower and run tests in parallel, which exposes all five.

A systematic approach:

1. **Reproduce locally under CI-like conditions**: run the test in a loop with parallelism and CPU pressure.
   \`\`\`bash
   for i in $(seq 1 50); do npx jest -t "{{testName}}" --runInBand=false || break; done
   \`\`\`
   (For pytest: \`pytest -p no:randomly --count=50 -x\` with \`pytest-repeat\`.)
2. **Randomize order** to catch hidden dependencies between tests — leftover rows in a shared database, a mocked clock never restored, a global singleton.
3. **Look for fixed sleeps and real time**: \`setTimeout(500)\`, \`Date.now()\`, "today" in assertions, time zones (CI runs in UTC).
4. **Capture more on failure**: logs, screenshots or traces for browser tests, and the seed/order.
5. **Quarantine, don't ignore**: tag it as flaky and track it in a ticket so it doesn't block everyone while you investigate.

If you paste the failing assertion and the test code I can look for the usual suspects.`,
      },
      {
        titles: [
          "Time zone bug in [[a Jest|our]] date test",
          "Date test fails in {{ci}} but not locally",
          "UTC vs local time in CI tests",
        ],
        user: md`
[[This Jest test fails intermittently in {{ci}}|Flaky date test in {{ci}}|Randomly failing on {{ci}}, fine locally]]:

\`\`\`
expect(received).toEqual(expected)
- Expected  "2026-03-01"
+ Received  "2026-02-28"
\`\`\`

[[The test formats a due date.|It's the invoice due-date test.|The code adds 30 days to an invoice date.]] [[Works on my machine in Zürich. 🤔|Passes locally (I'm in Zürich).|Never fails on my laptop in Zürich.]]`,
        assistant: md`
That's a time zone bug, not randomness: CI runners use UTC, you're on CET/CEST (UTC+1/+2). If the code does something like \`new Date("2026-03-01")\` (parsed as UTC midnight) and then formats with local-time getters, UTC midnight is still the 28th in any time zone west of UTC — and depending on the runner image or \`TZ\` setting, you get different results.

Fix the code, then pin the tests:

\`\`\`ts
// format in an explicit time zone instead of the machine's
new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Zurich", dateStyle: "short" }).format(due);
\`\`\`

\`\`\`json
"test": "TZ=UTC jest"
\`\`\`

Also run the suite once with \`TZ=America/Los_Angeles\` and once with \`TZ=Asia/Tokyo\` — date bugs show up immediately at the extremes. And if "today" is involved, freeze the clock (\`jest.useFakeTimers().setSystemTime(new Date("2026-03-01T12:00:00Z"))\`) so the test doesn't flake around midnight either.`,
      },
      {
        titles: [
          "Plan to reduce CI flakiness[[| in {{ci}}]]",
          "[[Cutting|Reducing]] {{ci}} pipeline time and flakes",
        ],
        user: "Our {{ci}} pipeline takes 25 minutes and about [[10%|15%|20%]] of runs fail on a random {{runner}} test, then pass on retry. Management wants a plan. What would you propose?",
        assistant: md`
A plan in three phases that you can present:

**Week 1 — measure.** Record every test result (JUnit XML upload works on all CI systems) and compute per-test flake rate: failed then passed on the same commit. Usually 5–10 tests cause 80% of the flakes.

**Weeks 2–3 — contain.** Automatically retry *only known-flaky tests* once and label them; put the top offenders in quarantine (run, but non-blocking) with an owner and a deadline. This brings the failure rate near zero quickly without hiding new flakes.

**Ongoing — fix root causes.** Typical fixes: replace sleeps with waiting for a condition, isolate databases per worker, freeze time, mock external HTTP.

For the 25 minutes: split the suite across parallel jobs by historical timing (e.g. 4 shards), cache dependencies, and run the slow end-to-end tests only on merge to main. Most teams get to under 10 minutes.

Success metrics to report: flake rate per week, % of PRs that needed a re-run, and median pipeline duration.`,
      },
    ],
    followUps: [
      {
        user: md`
[[Found another flaky one|Another flaky test|Different test, same pipeline]]: it shares a database with other tests running in parallel. Here's the failure:

\`\`\`
duplicate key value violates unique constraint "users_email_key"
\`\`\`

What's the cleanest isolation strategy?`,
        assistant: md`
Good find — that's the most common cause. Options from most to least isolated:

1. **A database (or schema) per worker**: use the worker id, e.g. \`JEST_WORKER_ID\` / \`PYTEST_XDIST_WORKER\`, in the database name, run migrations once per worker. Fully isolated, still fast.
2. **Transaction per test, rolled back at the end**: very fast, but doesn't work if the code under test opens its own transactions or connections.
3. **Unique data per test**: generate emails like \`user-\${crypto.randomUUID()}@example.test\`, so tests never collide even in a shared database. Cheap, and a good habit regardless.

I'd combine 1 and 3. Also make sure no test depends on the *absence* of other rows (e.g. "exactly 3 users exist") — those break as soon as anything runs in parallel.`,
      },
      {
        user: "How do I retry only the flaky tests in {{ci}} without hiding real failures?",
        assistant: md`
Keep retries narrow and visible:

- **Per test, not per job**: re-running the whole job hides which test flaked. Use the runner's own retry (\`jest.retryTimes(1, { logErrorsBeforeRetry: true })\` inside the flaky file, \`@pytest.mark.flaky(reruns=1)\`, Playwright's \`retries: 1\`).
- **Only for a list of known flakes**, each with a ticket link in a comment.
- **Report "passed on retry" separately**: Playwright marks them as *flaky* in its report; for others, parse JUnit XML and post a summary. A test that flakes more than ~2% of runs goes back to the top of the backlog.

Never set a global retry count on the whole suite — that's exactly how real race conditions in production code go unnoticed for months.`,
      },
      {
        user: "The test waits for an email to be sent with `await sleep(2000)`. Sometimes 2 seconds isn't enough on CI. [[Just increase it?|Should I bump it to 5s?]]",
        assistant: md`
I wouldn't — a longer sleep makes the suite slower *and* still flakes on a bad day. Wait for the condition instead:

\`\`\`ts
async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(\`Condition not met within \${timeoutMs}ms\`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

const email = await waitFor(() => mailbox.findLatest({ to: "customer@example.test" }));
expect(email.subject).toContain("Invoice");
\`\`\`

Usually it returns after ~150 ms, and only waits longer when CI is actually slow. Even better, if you control the code: make email sending awaitable in tests (an in-memory transport you can flush) so there's nothing to wait for.`,
      },
    ],
    points: [
      "Run the flaky test 50 times in a loop with parallelism to reproduce it",
      "Randomize test order to expose hidden dependencies",
      "Replace fixed sleeps with waiting for a condition",
      "Pin the time zone (`TZ=UTC`) and freeze the clock in date tests",
      "Give each test worker its own database or schema",
      "Retry only known-flaky tests, each with a ticket, and report them",
      "Upload JUnit XML and track the flake rate per test",
    ],
  },
  {
    key: "rust-lifetimes",
    domain: "engineering",
    weight: 1.5,
    subject: "Rust lifetimes",
    vars: {
      rustv: ["1.79", "1.81", "1.83", "1.85"],
      structName: ["Parser", "Tokenizer", "ConfigReader", "LogIndex", "Router"],
    },
    titles: [
      "Rust lifetimes [[question|help]] (Rust {{rustv}})",
    ],
    starts: [
      {
        titles: [
          "E0106 missing lifetime specifier[[| in Rust {{rustv}}| on longest()]]",
          "Returning a reference from a Rust function[[| ({{rustv}})]]",
          "Rust borrow checker: [[missing lifetime|which input is borrowed?]]",
          "Lifetime annotations for [[longest()|a function returning &str]]",
        ],
        user: md`
[[Rust {{rustv}} gives me this and I don't get it|Can someone explain this borrow checker error? (Rust {{rustv}})|Still fighting the borrow checker on Rust {{rustv}}. What does this mean|New to Rust ({{rustv}}), and I keep hitting this]]:

\`\`\`
error[E0106]: missing lifetime specifier
 --> src/lib.rs:4:33
  |
4 | fn longest(a: &str, b: &str) -> &str {
  |               ----     ----     ^ expected named lifetime parameter
  |
  = help: this function's return type contains a borrowed value, but the signature does not say whether it is borrowed from \`a\` or \`b\`
\`\`\``,
        assistant: md`
The compiler needs to know how long the returned reference is valid. It can only be valid as long as whatever it points into — but from the signature alone, Rust can't tell if that's \`a\` or \`b\`. So you tell it:

\`\`\`rust
fn longest<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.len() >= b.len() { a } else { b }
}
\`\`\`

Read \`'a\` as: "the result lives at most as long as the *shorter* of the two inputs". That's exactly the guarantee callers need:

\`\`\`rust
let outer = String::from("long string");
let result;
{
    let inner = String::from("xyz");
    result = longest(&outer, &inner);
}   // inner dropped here
println!("{result}"); // error: \`inner\` does not live long enough
\`\`\`

Lifetimes never change how long anything lives; they only describe relationships so the compiler can check them. The elision rules fill them in automatically when there's exactly one input reference (or a \`&self\`), which is why you rarely write them.`,
      },
      {
        titles: [
          "Lifetimes in [[struct|a struct called]] {{structName}}",
          "Storing [[&str|a string slice]] in {{structName}}",
          "Rust lifetimes explained with {{structName}}",
          "Borrowing input in {{structName}} without cloning",
        ],
        user: "I [[have|'m writing]] a `{{structName}}` struct that should hold a `&str` slice of the input [[instead of copying it|to avoid allocations|rather than owning a String]]. Adding a field `input: &str` gives \"missing lifetime specifier\". [[What's the idiomatic way?|How do I do this properly?|Do I need lifetimes here or should I just clone?]]",
        assistant: md`
A struct holding a reference needs a lifetime parameter, which says "a \`{{structName}}\` can't outlive the text it borrows":

\`\`\`rust
pub struct {{structName}}<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> {{structName}}<'a> {
    pub fn new(input: &'a str) -> Self {
        Self { input, pos: 0 }
    }

    /// Returns a slice of the original input, not of the {{structName}} itself.
    pub fn next_word(&mut self) -> Option<&'a str> {
        let rest = &self.input[self.pos..];
        let rest = rest.trim_start();
        if rest.is_empty() { return None; }
        let start = self.input.len() - rest.len();
        let end = rest.find(char::is_whitespace).map_or(self.input.len(), |i| start + i);
        self.pos = end;
        Some(&self.input[start..end])
    }
}
\`\`\`

Note the return type \`Option<&'a str>\` rather than \`Option<&str>\`: with elision, \`&str\` would be tied to \`&mut self\`, and you couldn't keep two words around while calling \`next_word\` again. Tying it to \`'a\` says the words borrow from the *input*.

If the struct needs to outlive the input (e.g. stored in a long-lived cache), own the data instead: \`String\` or \`Arc<str>\`.`,
      },
    ],
    followUps: [
      {
        user: "[[That compiles.|Got it, thanks.]] Related problem: I want to store a `{{structName}}<'a>` in another struct together with the `String` it borrows from, and it's a mess.",
        assistant: md`
That's the *self-referential struct* problem, and safe Rust doesn't allow it directly: if the owning struct moves, the \`String\`'s heap buffer stays put but the borrow checker can't prove that, so it refuses.

Options:
1. **Store indices instead of references**: keep the \`String\` and \`Range<usize>\`s into it. Simple and fast; slice on demand with \`&self.text[range.clone()]\`.
2. **Own the pieces**: \`Vec<String>\` or \`Arc<str>\` per token. Costs allocations, but often negligible.
3. **Restructure**: create the \`String\` higher up (e.g. in \`main\`) and pass \`&{{structName}}<'a>\` down, so the owner outlives everything that borrows from it.
4. **Crates** like \`ouroboros\` or \`yoke\` if you really need both in one struct.

Option 1 is what most parsers and indexers do.`,
      },
      {
        user: "What does `'static` actually mean? I see `T: 'static` in a `tokio::spawn` error.",
        assistant: md`
\`T: 'static\` doesn't mean "lives forever"; it means "**contains no borrowed references that could expire**". Owned types like \`String\`, \`Vec<u8>\` or \`Arc<Config>\` are all \`'static\` even though they get dropped eventually.

\`tokio::spawn\` requires it because the task may run longer than the function that spawned it:

\`\`\`rust
let name = String::from("{{structName}}");
let r = &name;
tokio::spawn(async move { println!("{r}") }); // error: borrowed value does not live long enough

let name = Arc::new(String::from("{{structName}}"));
let task_name = Arc::clone(&name);
tokio::spawn(async move { println!("{task_name}") }); // ok: owned
\`\`\`

So the fix for that error is almost always: move owned data (or an \`Arc\` clone) into the task instead of a reference. For short-lived parallel work inside one function, \`std::thread::scope\` lets threads borrow from the stack.`,
      },
      {
        user: "Is there a good mental model for lifetimes I can explain to the team?",
        assistant: md`
The one that works best in my experience: **a reference is a loan, and a lifetime is the loan's due date.**

- \`&T\` is a shared loan: many can read, nobody may modify the original while it's out.
- \`&mut T\` is an exclusive loan: one borrower, who may modify it.
- A lifetime parameter like \`'a\` names a due date so that signatures can say "the result is due back no later than the input".
- The borrow checker is the librarian verifying that no loan outlives the book and that there's never a writer alongside readers.

And three practical rules:
1. If you're fighting lifetimes in a struct, ask whether it should own the data.
2. Return references only into inputs, never into locals.
3. Clone when it makes the code simpler — it's usually cheaper than you think.`,
      },
    ],
    points: [
      "A lifetime describes how long a borrow is valid; it never extends a value's life",
      "Add `<'a>` when a function returns a reference derived from several inputs",
      "Structs that hold references need a lifetime parameter",
      "Store indices instead of references for self-referential data",
      "`T: 'static` means no borrowed data, not \"lives forever\"",
      "Move owned data or an `Arc` clone into spawned tasks",
    ],
  },
  {
    key: "sql-query-optimization",
    domain: "engineering",
    weight: 2,
    subject: "the slow {{table}} query",
    cases: [
      { table: "events", col: "account_id", col2: "created_at", rows: "180 million" },
      { table: "orders", col: "customer_id", col2: "placed_at", rows: "42 million" },
      { table: "page_views", col: "site_id", col2: "viewed_at", rows: "1.2 billion" },
      { table: "messages", col: "conversation_id", col2: "sent_at", rows: "65 million" },
      { table: "audit_log", col: "tenant_id", col2: "occurred_at", rows: "300 million" },
    ],
    vars: {
      db: ["PostgreSQL 16", "PostgreSQL 15", "MySQL 8.0", "Aurora PostgreSQL"],
      secs: ["4.8", "12", "31", "2.3", "9.6"],
      limit: ["50", "100", "20"],
    },
    titles: [
      "Optimizing slow query on {{table}}",
      "Speeding up {{table}} queries in {{db}}",
    ],
    starts: [
      {
        titles: [
          "Index for {{col}} and {{col2}}",
          "Query on {{table}} takes {{secs}}s",
          "Composite index on {{table}}",
        ],
        user: md`
This query on \`{{table}}\` ({{rows}} rows, {{db}}) takes {{secs}} seconds:

\`\`\`sql
SELECT * FROM {{table}}
WHERE {{col}} = $1
ORDER BY {{col2}} DESC
LIMIT {{limit}};
\`\`\`

There's an index on \`{{col}}\`. Why is it still slow?`,
        assistant: md`
With an index on \`{{col}}\` alone, the database finds *all* rows for that \`{{col}}\` (could be millions for a big one), then sorts them by \`{{col2}}\` to return just {{limit}}. The sort is the expensive part.

A composite index in the right column order lets it read the first {{limit}} rows already sorted and stop:

\`\`\`sql
CREATE INDEX CONCURRENTLY {{table}}_{{col}}_{{col2}}_idx
  ON {{table}} ({{col}}, {{col2}} DESC);
\`\`\`

Then check the plan:

\`\`\`sql
EXPLAIN (ANALYZE, BUFFERS) SELECT ... ;
\`\`\`

You want to see \`Index Scan using {{table}}_{{col}}_{{col2}}_idx\` with \`Limit\` on top and **no \`Sort\` node**; execution time should drop to a few milliseconds.

Notes:
- \`CONCURRENTLY\` avoids locking writes while the index builds (it takes longer, and can't run inside a transaction).
- The old single-column index on \`{{col}}\` becomes redundant — the new one covers the same lookups. Drop it after a few days to save write overhead.
- \`SELECT *\` forces heap lookups; if you only need a few columns, an \`INCLUDE (...)\` clause can make it an index-only scan.`,
      },
      {
        titles: [
          "Reading EXPLAIN ANALYZE [[output|for {{table}} join]]",
          "Seq scan on {{table}} in {{db}}",
        ],
        user: md`
[[Can you help me read this EXPLAIN ANALYZE?|What is this EXPLAIN ANALYZE telling me?|Query plan below — why is it slow?]] The query is a join between \`{{table}}\` and \`accounts\`[[, filtered to the last 30 days| on {{db}}|]].

\`\`\`
Hash Join  (cost=1840.22..984211.75 rows=52 width=212) (actual time=210.114..9102.551 rows=48211 loops=1)
  Hash Cond: ({{table}}.{{col}} = accounts.id)
  ->  Seq Scan on {{table}}  (cost=0.00..912344.10 rows=9120331 width=180) (actual time=0.021..8120.337 rows=9120331 loops=1)
        Filter: ({{col2}} > (now() - '30 days'::interval))
        Rows Removed by Filter: 170879669
  ->  Hash  (cost=1602.11..1602.11 rows=19049 width=32) (actual time=12.044..12.045 rows=19049 loops=1)
\`\`\``,
        assistant: md`
Reading it bottom-up, the problem is the **Seq Scan on \`{{table}}\`**: it reads the whole table and throws away ~171M rows (\`Rows Removed by Filter\`) to keep the last 30 days. That's where almost all the time goes.

Also note the estimate mismatch on the join: \`rows=52\` estimated vs \`rows=48211\` actual. Bad estimates lead to bad plans, so run \`ANALYZE {{table}};\` and see if it changes.

Fixes, in order of impact:

1. **An index on the time column**, since the filter is selective (5% of rows):
   \`\`\`sql
   CREATE INDEX CONCURRENTLY ON {{table}} ({{col2}});
   \`\`\`
2. **If you also filter by account**, make it \`({{col}}, {{col2}})\`.
3. **Long term**, partition \`{{table}}\` by month on \`{{col2}}\`: queries for "last 30 days" then only touch one or two partitions, and dropping old data becomes \`DROP TABLE\` instead of a huge \`DELETE\`.

Post the plan again after the index and statistics — I'd expect a Bitmap or Index Scan and well under a second.`,
      },
      {
        titles: [
          "[[Pagination|OFFSET pagination]] on {{table}} is slow",
          "Keyset pagination for {{table}}",
        ],
        user: "Our [[admin page|API|export job]] paginates `{{table}}` with `OFFSET`, and page [[2,000|5,000|800]] takes [[forever|{{secs}} seconds]]. [[Is there a better way?|How do I fix deep pagination?|Any alternative?]]",
        assistant: md`
Yes: \`OFFSET 100000\` still makes the database produce and discard 100,000 rows, so deep pages get linearly slower. Use **keyset (cursor) pagination** instead — remember the last row you showed and continue after it:

\`\`\`sql
-- first page
SELECT id, {{col2}}, {{col}} FROM {{table}}
ORDER BY {{col2}} DESC, id DESC
LIMIT {{limit}};

-- next page: pass the last row's ({{col2}}, id)
SELECT id, {{col2}}, {{col}} FROM {{table}}
WHERE ({{col2}}, id) < ($1, $2)
ORDER BY {{col2}} DESC, id DESC
LIMIT {{limit}};
\`\`\`

With an index on \`({{col2}} DESC, id DESC)\` every page costs the same few milliseconds, whether it's page 2 or page 20,000. The \`id\` tiebreaker matters: without it, rows with identical timestamps can be skipped or repeated between pages.

Trade-off: you can't jump to "page 2,000" directly. In practice nobody wants that; offer filters (date range, search) and "next/previous" instead. Encode the cursor as an opaque base64 string in the API so clients don't depend on its structure.`,
      },
    ],
    followUps: [
      {
        user: "The index helped for most accounts, but for our biggest customer the query is still slow. [[Why would that be?|Same query, different speed?]]",
        assistant: md`
Probably a **generic plan** or a skewed value. With prepared statements, after five executions Postgres may switch to a generic plan that's fine for average accounts but terrible for one with 30% of all rows — or vice versa.

Check:

\`\`\`sql
EXPLAIN (ANALYZE, BUFFERS) EXECUTE my_stmt('big-customer-id');
SHOW plan_cache_mode;
\`\`\`

Options:
- \`SET plan_cache_mode = force_custom_plan\` for that role or statement, so each execution is planned with the actual value.
- Increase statistics for the skewed column so the planner knows about the big customer: \`ALTER TABLE {{table}} ALTER COLUMN {{col}} SET STATISTICS 1000; ANALYZE {{table}};\`
- For extreme cases, partitioning or a separate table for the top customer.

Also check \`BUFFERS\`: if \`shared read\` is large, the big customer's data simply isn't in cache — that's I/O, not the plan.`,
      },
      {
        user: "How do I find the other slow queries before users complain?",
        assistant: md`
Turn on \`pg_stat_statements\` (it's in \`shared_preload_libraries\` on most managed Postgres already) and look at total time, not just the slowest single query:

\`\`\`sql
SELECT round(total_exec_time) AS total_ms,
       calls,
       round(mean_exec_time, 1) AS mean_ms,
       left(query, 100) AS query
FROM pg_stat_statements
ORDER BY total_exec_time DESC
LIMIT 15;
\`\`\`

A 20 ms query called 2 million times a day matters more than a 5 s report that runs once. Complement it with:
- \`log_min_duration_statement = '500ms'\` to log individual slow executions with parameters.
- \`auto_explain\` with \`auto_explain.log_min_duration = '1s'\` to capture plans of slow queries automatically.
- A weekly look at the top 15, reset with \`pg_stat_statements_reset()\` after big releases.`,
      },
      {
        user: "Is it bad to have lots of indexes on `{{table}}`? We already have [[seven|nine|eleven]].",
        assistant: md`
Each index costs on every write (insert, and updates of indexed columns), disk, and memory for caching. On a write-heavy table like \`{{table}}\`, too many indexes show up as slower inserts and more WAL.

Find unused or redundant ones:

\`\`\`sql
SELECT relname, indexrelname, idx_scan, pg_size_pretty(pg_relation_size(indexrelid)) AS size
FROM pg_stat_user_indexes
WHERE relname = '{{table}}'
ORDER BY idx_scan ASC;
\`\`\`

- \`idx_scan = 0\` over a few weeks (check replicas too!) → candidate to drop.
- An index on \`({{col}})\` is redundant next to \`({{col}}, {{col2}})\`.
- Keep indexes that back unique constraints or foreign keys even if rarely scanned.

Drop with \`DROP INDEX CONCURRENTLY\`, one at a time, and watch latency for a day.`,
      },
    ],
    points: [
      "Create a composite index matching the filter and sort: `({{col}}, {{col2}} DESC)`",
      "Read EXPLAIN (ANALYZE, BUFFERS) bottom-up and look for large `Rows Removed by Filter`",
      "Run `ANALYZE {{table}}` when estimated and actual rows differ a lot",
      "Use keyset pagination instead of large OFFSETs",
      "Build indexes with `CREATE INDEX CONCURRENTLY` in production",
      "Use `pg_stat_statements` sorted by total time to find what matters",
      "Drop unused indexes; each one slows down writes",
    ],
  },
  {
    key: "terraform-drift",
    domain: "engineering",
    weight: 1.5,
    subject: "the Terraform drift",
    cases: [
      { resource: "aws_security_group.api", kind: "security group", attr: "ingress" },
      { resource: "aws_s3_bucket.assets", kind: "S3 bucket", attr: "tags" },
      { resource: "google_sql_database_instance.main", kind: "Cloud SQL instance", attr: "settings.tier" },
      { resource: "aws_iam_role.ci_deployer", kind: "IAM role", attr: "assume_role_policy" },
      { resource: "azurerm_kubernetes_cluster.prod", kind: "AKS cluster", attr: "default_node_pool.node_count" },
    ],
    vars: { tfv: ["1.6", "1.7", "1.9", "1.10"], env: ["prod", "staging", "eu-prod"] },
    titles: [
      "Terraform drift on [[{{kind}}|{{resource}}]]",
      "Terraform {{tfv}} drift in {{env}}",
    ],
    starts: [
      {
        titles: [
          "terraform plan shows unexpected changes[[| in {{env}}]]",
          "[[Someone changed|Manual change to]] {{resource}} [[in the console|outside Terraform]]",
          "Unexpected diff on {{attr}}[[| in {{env}}]]",
        ],
        user: md`
\`terraform plan\` in {{env}} wants to change \`{{resource}}\` even though nobody touched the code:

\`\`\`
  # {{resource}} will be updated in-place
  ~ resource "{{resource}}" {
      ~ {{attr}} = ...
    }
Plan: 0 to add, 1 to change, 0 to destroy.
\`\`\`

[[I suspect someone clicked around in the console.|Probably a manual change during last week's incident.|No idea who changed it.]] [[What's the safe way to handle this?|Should I just apply?|How do I figure out what happened?]]`,
        assistant: md`
Don't apply blindly — applying *reverts* the manual change, which might have been an emergency fix. First find out what changed and why:

1. **See the real diff**: \`terraform plan -refresh-only\` shows exactly how the live {{kind}} differs from state, without proposing to change anything.
2. **Find who did it**: CloudTrail / Cloud Audit Logs / Azure Activity Log, filtered on the resource, for the last few days.
3. **Decide**:
   - The change was wrong → \`terraform apply\` to restore the code's version.
   - The change was right → put it into the \`.tf\` code, run \`plan\` until it shows *no changes*, then merge.
   - Both valid, but Terraform shouldn't manage that attribute → \`lifecycle { ignore_changes = [{{attr}}] }\` (sparingly — it hides future drift too).

To catch this earlier next time, run a scheduled \`terraform plan -detailed-exitcode\` in CI (exit code 2 means drift) and post to Slack.`,
      },
      {
        titles: [
          "[[Nightly|Scheduled|Automatic]] drift detection for Terraform",
          "Detecting drift in {{env}} infrastructure",
          "Terraform drift checks in [[CI|GitHub Actions|a nightly job]]",
        ],
        user: "[[How do we set up|What's a good way to set up|Can you suggest a setup for]] automatic drift detection for our Terraform {{tfv}} [[setup|infrastructure|repo]]? We have [[about 40|a dozen|60+]] workspaces across dev, staging and {{env}}.",
        assistant: md`
A nightly CI job per workspace is the simplest reliable setup:

\`\`\`yaml
name: drift-detection
on:
  schedule: [{ cron: "0 5 * * 1-5" }]
jobs:
  plan:
    strategy:
      matrix:
        workspace: [network, database, k8s, iam]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: hashicorp/setup-terraform@v3
        with: { terraform_version: "{{tfv}}.0" }
      - run: terraform init -input=false
        working-directory: infra/\${{ matrix.workspace }}
      - run: terraform plan -refresh-only -detailed-exitcode -input=false
        working-directory: infra/\${{ matrix.workspace }}
\`\`\`

\`-detailed-exitcode\` returns **0** (no changes), **1** (error) or **2** (drift); fail the job on 2 and notify the owning team. Give the job read-only cloud credentials — detection should never apply anything.

Beyond that: restrict console write access in {{env}} (break-glass role with alerts), and tag every resource with \`managed-by = terraform\` so people see it before editing.`,
      },
    ],
    followUps: [
      {
        user: "[[If|When]] a console change turns out to be correct, how do I bring it into code without Terraform recreating the {{kind}}?",
        assistant: md`
Update the code to match reality, then verify with a plan that shows **no changes**:

1. Run \`terraform state show {{resource}}\` after a refresh to see the current values.
2. Edit the \`.tf\` so \`{{attr}}\` matches exactly.
3. \`terraform plan\` → expect \`No changes. Your infrastructure matches the configuration.\`

If the plan says \`must be replaced\` instead of \`update in-place\`, stop: some attribute forces replacement. Look for the \`# forces replacement\` comment in the plan, it names the attribute.

If the resource was created entirely in the console, use an \`import\` block (Terraform 1.5+):

\`\`\`hcl
import {
  to = {{resource}}
  id = "<cloud resource id>"
}
\`\`\`

and \`terraform plan -generate-config-out=generated.tf\` to get a starting point for the code.`,
      },
      {
        user: "Is `ignore_changes` a bad idea in general?",
        assistant: md`
It's a precise tool that is often used as a blunt one. Good uses:

- Attributes managed by something else on purpose: \`desired_count\` of an ECS service controlled by autoscaling, node counts managed by the cluster autoscaler, tags added by a cost tool.
- Values set once at creation (an initial password rotated later by a secrets manager).

Bad uses: silencing a diff you don't understand, or \`ignore_changes = all\`. Both hide real drift indefinitely.

Always add a comment explaining *who* owns the ignored attribute instead, so the next person doesn't remove it or copy it everywhere.`,
      },
      {
        user: "We also have state file conflicts when two people run apply at the same time. How do we prevent that?",
        assistant: md`
Use a remote backend **with locking**, and run applies from CI only:

\`\`\`hcl
terraform {
  backend "s3" {
    bucket       = "{{companyDomain}}-terraform-state"
    key          = "{{env}}/network.tfstate"
    region       = "eu-central-1"
    use_lockfile = true   # S3-native locking (1.10+); older setups use a DynamoDB table
    encrypt      = true
  }
}
\`\`\`

With locking, a second \`apply\` fails with \`Error acquiring the state lock\` instead of corrupting state. Then make the pull request the only way to apply: plan on PR, apply on merge (Atlantis, Spacelift, or a plain CI job with a required approval). Local applies become the exception.`,
      },
    ],
    points: [
      "Run `terraform plan -refresh-only` to see drift without proposing changes",
      "Check the cloud audit log to find who made the manual change",
      "Codify correct manual changes and re-plan until there are no changes",
      "Use `-detailed-exitcode` in a nightly CI job; exit code 2 means drift",
      "Use `ignore_changes` only for attributes owned by something else",
      "Use a remote backend with state locking and apply only from CI",
    ],
  },
  {
    key: "oauth-jwt-auth",
    domain: "engineering",
    weight: 2,
    subject: "the JWT authentication",
    vars: {
      idp: ["Auth0", "Okta", "Keycloak", "Microsoft Entra ID", "Cognito", "Google Identity"],
      stack: ["Express", "Fastify", "NestJS", "FastAPI", "Spring Boot", "Go with chi"],
      alg: ["RS256", "ES256"],
      clientType: ["single-page app", "mobile app", "Next.js app"],
    },
    titles: [
      "JWT validation in {{stack}}",
      "Validating {{alg}} JWTs from {{idp}}",
    ],
    starts: [
      {
        titles: [
          "OAuth [[authorization code flow|login]] with PKCE[[| for {{clientType}}]]",
          "{{idp}} login for our {{clientType}}",
          "Adding {{idp}} SSO to our {{clientType}}",
        ],
        user: "We're adding login with {{idp}} to our {{clientType}}, and the API is {{stack}}. What's the right OAuth flow and how should the API validate tokens?",
        assistant: md`
Use the **Authorization Code flow with PKCE** for the {{clientType}} — the implicit flow is deprecated, and PKCE protects the code exchange without a client secret (which a public client can't keep anyway).

Flow in short:
1. The app creates a random \`code_verifier\` and sends its SHA-256 hash as \`code_challenge\` to {{idp}}'s \`/authorize\` endpoint.
2. The user logs in; {{idp}} redirects back with a one-time \`code\`.
3. The app exchanges \`code\` + \`code_verifier\` at \`/oauth/token\` for an access token (and optionally a refresh token).
4. The app calls your API with \`Authorization: Bearer <access token>\`.

On the API side, validate every request:
- **Signature** against {{idp}}'s JWKS (\`/.well-known/jwks.json\`), cached, selected by the token's \`kid\`; only accept \`{{alg}}\`.
- **\`iss\`** equals your {{idp}} tenant URL, **\`aud\`** equals your API identifier.
- **\`exp\`/\`nbf\`** with a small clock skew (≤ 60 s).
- Then authorize on scopes/roles from claims.

Use a maintained library (\`jose\` in Node, \`PyJWT\` + \`cryptography\` in Python, \`nimbus-jose-jwt\` in Java) rather than parsing tokens yourself.`,
      },
      {
        titles: [
          "Invalid signature error with {{idp}} tokens",
          "JWSSignatureVerificationFailed in {{stack}}",
          "{{idp}} JWT rejected by {{stack}} API",
        ],
        user: md`
Our {{stack}} API rejects tokens from {{idp}} with:

\`\`\`
JWSSignatureVerificationFailed: signature verification failed
\`\`\`

But the token looks fine on jwt.io. What could be wrong?`,
        assistant: md`
jwt.io decodes without verifying unless you give it the key, so "looks fine" only means it's well-formed. Common causes, most likely first:

1. **Wrong key set**: you're fetching JWKS from a different tenant, region or environment than the one that issued the token. Compare the token's \`iss\` claim with the JWKS URL you use.
2. **Stale cache after key rotation**: the token's \`kid\` isn't in your cached JWKS. Libraries like \`jose\`'s \`createRemoteJWKSet\` refetch on unknown \`kid\`; a hand-rolled cache often doesn't.
3. **It's not an access token for your API**: some providers issue opaque or differently-signed tokens when no \`audience\` is requested ({{idp}} in particular). Request the token with your API's audience.
4. **Algorithm mismatch**: token is \`{{alg}}\`, but the verifier expects HS256 with a shared secret.

Quick check in Node:

\`\`\`ts
import { createRemoteJWKSet, jwtVerify, decodeProtectedHeader } from "jose";
console.log(decodeProtectedHeader(token)); // { alg, kid }
const jwks = createRemoteJWKSet(new URL("https://<tenant>/.well-known/jwks.json"));
const { payload } = await jwtVerify(token, jwks, { issuer: "https://<tenant>/", audience: "https://api.{{companyDomain}}.example" });
\`\`\``,
      },
    ],
    followUps: [
      {
        user: "Where should the {{clientType}} store the tokens? [[localStorage feels wrong.|My colleague says cookies, I say localStorage.]]",
        assistant: md`
Your instinct is right: anything in \`localStorage\` can be read by any script on the page, so a single XSS bug leaks the token.

Options, best first:
1. **Backend-for-frontend (BFF)**: the server does the OAuth exchange and keeps tokens; the browser only gets an \`HttpOnly; Secure; SameSite=Lax\` session cookie. Tokens never reach JavaScript. Best for web apps, including Next.js.
2. **In-memory only** in a pure SPA, with short-lived access tokens (5–15 min) and refresh-token rotation; refresh on page load through the provider's session.
3. **Mobile apps**: the platform keychain/keystore (iOS Keychain, Android Keystore), never plain preferences.

Whatever you choose: short access token lifetime, refresh tokens that rotate on use, and a solid Content-Security-Policy to reduce XSS in the first place.`,
      },
      {
        user: "How do refresh token rotation and reuse detection work?",
        assistant: md`
With rotation, every time the client uses a refresh token it gets a **new** refresh token and the old one is invalidated. Reuse detection adds: if an old (already used) refresh token is presented again, the provider assumes it was stolen and revokes the whole token family, logging the user out everywhere.

Timeline of an attack it stops:
1. Attacker steals refresh token **R1**.
2. Legit app uses R1 → gets R2. R1 is now used.
3. Attacker uses R1 → reuse detected → R2 and all descendants revoked.

Practical settings: refresh token absolute lifetime 7–30 days, idle timeout a few days, and a small reuse grace period (a few seconds) to handle two browser tabs refreshing at the same moment. In {{idp}} this is a per-application setting.`,
      },
      {
        user: "How do we handle authorization — roles or scopes in the token?",
        assistant: md`
Both, for different things:

- **Scopes** describe what the *client application* may do on the user's behalf (\`orders:read\`, \`orders:write\`). Check them per endpoint.
- **Roles/permissions** describe what the *user* may do (\`admin\`, \`billing-manager\`). Put a small set in a namespaced custom claim, e.g. \`https://{{companyDomain}}.example/roles\`.
- **Resource-level rules** ("can edit *this* invoice") don't belong in the token at all — check them in the API against your database, since they change too often.

Middleware sketch for {{stack}}:

\`\`\`ts
function requireScope(scope: string) {
  return (req, res, next) =>
    req.auth?.scope?.split(" ").includes(scope) ? next() : res.status(403).json({ error: "insufficient_scope" });
}
app.post("/orders", requireScope("orders:write"), createOrder);
\`\`\`

Return 401 for missing/invalid tokens and 403 for valid tokens without permission — clients treat them differently.`,
      },
    ],
    points: [
      "Use Authorization Code flow with PKCE for public clients",
      "Validate signature via the provider's JWKS, selected by `kid`",
      "Check `iss`, `aud` and `exp` on every request",
      "Allow only the expected algorithm ({{alg}}), never `none`",
      "Keep tokens out of `localStorage`; prefer a BFF with HttpOnly cookies",
      "Rotate refresh tokens and enable reuse detection",
      "Return 401 for invalid tokens and 403 for missing permissions",
    ],
  },
  {
    key: "redis-caching",
    domain: "engineering",
    weight: 1.5,
    subject: "the Redis cache",
    vars: {
      endpoint: ["/api/products/:id", "/api/pricing", "the user profile endpoint", "/v2/search", "the dashboard stats query"],
      ttl: ["60", "300", "900", "3600"],
      hitRate: ["41%", "58%", "73%", "22%"],
      redisv: ["7.2", "7.4", "Valkey 8"],
    },
    titles: [
      "Redis {{redisv}} caching [[patterns|setup]]",
    ],
    starts: [
      {
        titles: [
          "Caching {{endpoint}} with Redis[[| {{redisv}}]]",
          "[[Redis|Cache]] invalidation for {{endpoint}}",
          "[[TTL|Expiry and invalidation]] for {{endpoint}} cache",
        ],
        user: "We want to cache {{endpoint}} in Redis {{redisv}}. It hits Postgres and takes ~[[300|450|800|1,200]] ms[[ at p95|]]. [[What's a sane pattern, and how do we handle invalidation?|How should we structure keys and invalidation?|What's the simplest approach that won't serve stale data forever?]]",
        assistant: md`
Start with **cache-aside** and a TTL, then add explicit invalidation where staleness matters:

\`\`\`ts
async function getProduct(id: string): Promise<Product> {
  const key = \`product:v1:\${id}\`;
  const cached = await redis.get(key);
  if (cached) return JSON.parse(cached);
  const product = await db.products.findById(id);
  await redis.set(key, JSON.stringify(product), "EX", {{ttl}} + randomInt(30)); // jitter, randomInt from node:crypto
  return product;
}

async function updateProduct(id: string, patch: Partial<Product>) {
  await db.products.update(id, patch);
  await redis.del(\`product:v1:\${id}\`); // delete after the write commits
}
\`\`\`

Why these details:
- **Delete, don't update** the key on writes — updating races with concurrent reads that can put stale data back.
- **Version in the key** (\`v1\`): when the cached shape changes, bump it instead of flushing everything.
- **TTL jitter** so keys written together don't all expire in the same second.
- The TTL ({{ttl}}s here) is your upper bound on staleness if an invalidation is ever missed.

Measure hit rate (\`keyspace_hits\` / (\`keyspace_hits\` + \`keyspace_misses\`) from \`INFO stats\`) and p95 latency before and after.`,
      },
      {
        titles: [
          "Cache stampede [[when keys expire|on {{endpoint}}]]",
          "[[Low|Only]] {{hitRate}} cache hit rate[[| in Redis]]",
          "DB load spikes when [[cache keys|hot keys]] expire",
        ],
        user: "Every [[hour|few minutes|time the homepage key expires]][[ when a hot key expires|]], we get a spike of database load and [[timeouts|502s|slow requests]]. Our cache hit rate is {{hitRate}} overall. [[What's going on?|Why?|How do we stop this?]]",
        assistant: md`
That's a **cache stampede** (thundering herd): when a hot key expires, hundreds of concurrent requests miss at once and all hit the database with the same query.

Fixes, combinable:

1. **Single-flight per key**: only one request recomputes; others wait briefly or serve stale data.
   \`\`\`ts
   const lock = await redis.set(\`lock:\${key}\`, "1", "NX", "PX", 5000);
   if (lock) { /* recompute and SET, then DEL lock */ }
   else { await sleep(50); return getFromCacheOrStale(key); }
   \`\`\`
2. **Stale-while-revalidate**: store \`{ value, softExpiry }\` with a longer hard TTL; after the soft expiry, serve the old value and refresh in the background.
3. **Probabilistic early refresh**: recompute slightly before expiry with a probability that rises as expiry approaches, so one request refreshes early.
4. **TTL jitter** so keys don't expire together.

On the {{hitRate}} hit rate: check what you're caching. Often the key includes something too specific (user id, full query string with tracking parameters), so entries are never reused.`,
      },
    ],
    followUps: [
      {
        user: md`
Now Redis is running out of memory:

\`\`\`
OOM command not allowed when used memory > 'maxmemory'.
\`\`\`

What should \`maxmemory-policy\` be?`,
        assistant: md`
That error means the policy is \`noeviction\` (the default), so Redis refuses writes when full. For a pure cache you want eviction:

\`\`\`
maxmemory 2gb
maxmemory-policy allkeys-lfu
\`\`\`

- \`allkeys-lfu\` evicts least *frequently* used keys — usually best for caches with hot and cold data.
- \`allkeys-lru\` (least recently used) is the common alternative.
- \`volatile-*\` policies only evict keys with a TTL — useful if the same instance also holds data that must never be evicted (better: use a separate instance for that).

Also check what's taking space: \`redis-cli --bigkeys\` and \`MEMORY USAGE <key>\`. Frequent culprits: huge JSON values (cache smaller projections), and keys without TTL that accumulate forever.`,
      },
      {
        user: "Should we cache per user or globally for {{endpoint}}?",
        assistant: md`
Cache at the level where the data is actually shared:

- **Global keys** for data that's identical for everyone (product details, prices for a region, feature config). Highest hit rate.
- **Per-tenant keys** (\`t:{tenantId}:...\`) when data differs by organization — and always include the tenant in the key, or you'll eventually serve one customer's data to another.
- **Per-user** only for genuinely personal data, with a shorter TTL; hit rates are low, so make sure it's worth it.

A common trick for pages that mix both: cache the shared part globally and merge the personal bits (e.g. "in your cart") on each request. The biggest bug to avoid is caching a response that was personalized under a global key.`,
      },
      {
        user: "How do we monitor whether the cache actually helps?",
        assistant: md`
Track these four, ideally per key prefix:

1. **Hit rate** — from \`INFO stats\`, or better, emit your own \`cache_hit\`/\`cache_miss\` counters labelled by prefix so you can see which caches earn their keep.
2. **Latency** of the endpoint, p50 and p95, before and after — the real goal.
3. **Database load**: queries per second and CPU on the primary.
4. **Evictions and memory**: \`evicted_keys\` climbing fast means the cache is too small for the working set.

A cache with a hit rate under ~30% is usually adding complexity for little benefit. Consider removing it or changing the key design.`,
      },
    ],
    points: [
      "Use cache-aside with a TTL as the default pattern",
      "Delete keys after writes instead of updating them",
      "Put a version prefix in cache keys",
      "Add TTL jitter so hot keys don't expire together",
      "Prevent stampedes with a per-key lock or stale-while-revalidate",
      "Set `maxmemory-policy allkeys-lfu` for cache-only instances",
      "Always include the tenant in keys for tenant-specific data",
    ],
  },
  {
    key: "docker-image-size",
    domain: "engineering",
    weight: 1.5,
    subject: "the Docker image",
    vars: {
      size: ["1.8 GB", "2.4 GB", "1.2 GB", "950 MB"],
      lang: ["Node.js 20", "Node.js 22", "Python 3.12", "Go 1.23", "Java 21"],
      svc: ["api", "worker", "web", "ingest"],
    },
    titles: [
      "Smaller {{lang}} [[container|Docker]] image",
    ],
    starts: [
      {
        titles: [
          "Shrinking [[a|our]] {{size}} [[Docker|{{lang}}]] image",
          "Multi-stage Dockerfile for {{lang}}[[| {{svc}}]]",
          "[[Distroless vs alpine|Alpine or distroless]] for {{svc}}",
        ],
        user: "Our {{lang}} `{{svc}}` image is {{size}} and takes forever to push and pull. [[How do I make it smaller?|What are the usual tricks?]]",
        assistant: md`
The big wins almost always come from a **multi-stage build**: build tools and dev dependencies stay in the first stage; the final image only gets what runs in production. For {{lang}} roughly:

\`\`\`dockerfile
# syntax=docker/dockerfile:1.7
FROM node:22-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM gcr.io/distroless/nodejs22-debian12
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER nonroot
CMD ["dist/server.js"]
\`\`\`

(Same idea for Python with a venv copied over, or Go with a static binary on \`scratch\`/distroless — a Go service usually ends up at 15–30 MB.)

Other checks:
- A \`.dockerignore\` with \`node_modules\`, \`.git\`, test fixtures, local \`.env\` files.
- \`docker history <image>\` or \`dive\` to see which layer is big.
- Never \`COPY . .\` before installing dependencies, or every code change invalidates the dependency layer.

Going from {{size}} to 150–300 MB is typical.`,
      },
      {
        titles: [
          "Docker build cache not working[[| in CI| for {{svc}}]]",
          "Slow Docker builds for {{svc}}[[| ({{lang}})]]",
          "Docker layer caching for {{svc}} image",
        ],
        user: "Our Docker builds [[in CI|on {{lang}} services|for the {{svc}} image]] always reinstall dependencies, even when only [[one source file|a README|a single line]] changed. [[The build takes 9 minutes.|It's killing our pipeline time.]] Why doesn't the cache work?",
        assistant: md`
Two usual reasons:

**1. Layer order.** Each instruction's cache depends on everything before it. If you \`COPY . .\` before \`npm ci\`/\`pip install\`, any file change invalidates the install layer. Copy only the lockfiles first:

\`\`\`dockerfile
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
\`\`\`

**2. CI runners start with an empty cache.** Each job runs on a fresh machine, so there are no local layers. Export the cache to the registry or the CI cache:

\`\`\`bash
docker buildx build \
  --cache-from type=registry,ref=registry.example.com/{{svc}}:buildcache \
  --cache-to type=registry,ref=registry.example.com/{{svc}}:buildcache,mode=max \
  -t registry.example.com/{{svc}}:$GIT_SHA --push .
\`\`\`

(On GitHub Actions, \`type=gha\` works too.) Add BuildKit cache mounts (\`RUN --mount=type=cache,target=/root/.npm npm ci\`) so even a cache miss reuses downloaded packages. Builds with only source changes typically drop to 1–2 minutes.`,
      },
    ],
    followUps: [
      {
        user: "Distroless or alpine for the final stage?",
        assistant: md`
Both are fine; the trade-offs:

- **Distroless**: no shell, no package manager — smaller attack surface and fewer CVEs in scans. Downside: you can't \`exec\` into it with a shell; debug with \`kubectl debug\` and an ephemeral container, or use the \`:debug\` variant in staging.
- **Alpine**: tiny and has a shell, but uses **musl** instead of glibc. Native modules (e.g. \`sharp\`, \`bcrypt\`, some Python wheels) may need compiling or behave differently; DNS resolution has quirks too.
- **Debian slim** (\`bookworm-slim\`): a bit bigger, but glibc and fewest surprises.

For {{lang}} I'd pick distroless if you don't need a shell, otherwise slim. I'd only pick Alpine if you've verified your native dependencies.`,
      },
      {
        user: "The security scan flags [[37|112|64]] CVEs in the image. How many of those matter?",
        assistant: md`
Usually few. Triage like this:

1. **Rebase first**: most CVEs come from the base image's OS packages. Moving to distroless/slim and rebuilding regularly (weekly, automated) removes the bulk.
2. **Filter by reachability**: a CVE in \`curl\` doesn't matter if nothing calls curl — and with distroless it's not even there. Scanners like Trivy or Grype can show only fixable ones: \`trivy image --ignore-unfixed --severity HIGH,CRITICAL registry.example.com/{{svc}}:latest\`.
3. **Application dependencies**: update those through your normal dependency tooling (Dependabot/Renovate).
4. **Document exceptions** for the rest in a \`.trivyignore\` with a reason and an expiry date.

Aim for zero *fixable* critical/high vulnerabilities, not zero findings.`,
      },
      {
        user: "Should the container run as root? It's the default.",
        assistant: md`
No — run as a non-root user. If the process is compromised, root inside the container makes container escapes and host damage much more likely.

\`\`\`dockerfile
RUN useradd --system --uid 10001 app
USER 10001
\`\`\`

(Distroless images ship a \`nonroot\` user, uid 65532.) In Kubernetes, enforce it too:

\`\`\`yaml
securityContext:
  runAsNonRoot: true
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: { drop: ["ALL"] }
\`\`\`

Typical snags: binding to ports below 1024 (listen on 8080 instead) and writing into the app directory (use a mounted \`emptyDir\` for temp files).`,
      },
    ],
    points: [
      "Use a multi-stage build so build tools never reach the final image",
      "Copy lockfiles and install dependencies before copying the source",
      "Add a `.dockerignore` for node_modules, .git and local env files",
      "Export the build cache to the registry in CI",
      "Inspect layers with `docker history` or `dive`",
      "Run as a non-root user",
      "Scan with Trivy and fix critical and high findings that have fixes",
    ],
  },
  {
    key: "git-rebase-conflicts",
    domain: "engineering",
    weight: 1.5,
    subject: "the rebase",
    vars: {
      branch: ["feature/search-filters", "fix/invoice-rounding", "feat/sso-login", "refactor/payments-client", "chore/upgrade-react"],
      base: ["main", "develop"],
      commits: ["14", "23", "7", "31"],
      file: ["src/api/routes.ts", "package-lock.json", "app/models/user.py", "internal/billing/invoice.go", "README.md"],
    },
    titles: [
      "[[Rebase|Rebasing]] {{branch}} onto {{base}}",
    ],
    starts: [
      {
        titles: [
          "Git rebase conflicts on {{branch}}",
          "Undo a bad git rebase[[| on {{branch}}]]",
          "[[Conflict|Merge conflict]] in {{file}} during rebase",
        ],
        user: "I rebased `{{branch}}` onto `{{base}}` and now I'm in the middle of conflicts in `{{file}}`, and I'm not sure I resolved the first ones right. [[Can I undo everything?|How do I get back to where I was?]]",
        assistant: md`
Yes. Two escape hatches:

**While the rebase is still running:**

\`\`\`bash
git rebase --abort
\`\`\`

This puts the branch back exactly as it was before you started.

**If the rebase already finished** (or you're not sure), use the reflog — Git keeps the old commit around:

\`\`\`bash
git reflog
# find the line before "rebase (start)", e.g.  a1b2c3d HEAD@{12}: commit: add filter chips
git reset --hard HEAD@{12}
\`\`\`

\`reset --hard\` throws away uncommitted changes, so stash anything you want to keep first. For extra safety, tag the old state before trying again: \`git tag backup/{{branch}} HEAD@{12}\`.

When you retry, \`git rebase -i {{base}}\` lets you see all {{commits}} commits first, and turning on \`git config --global rerere.enabled true\` makes Git remember your conflict resolutions, so you don't solve the same conflict twice.`,
      },
      {
        titles: [
          "Squash {{commits}} commits [[before merge|on {{branch}}]]",
          "Cleaning up commits on {{branch}}",
          "Interactive rebase to [[squash|tidy up]] {{branch}}",
        ],
        user: "My branch `{{branch}}` has {{commits}} messy commits (\"wip\", \"fix\", \"fix again\"). How do I clean them up before opening the PR?",
        assistant: md`
Interactive rebase:

\`\`\`bash
git fetch origin
git rebase -i origin/{{base}}
\`\`\`

An editor opens with one line per commit:

\`\`\`
pick 3f2a1c9 add filter chips
pick 8b1d0e2 wip
pick c44e9a7 fix
pick 1e07f3b add tests
pick 9a6b2d4 fix again
\`\`\`

Change \`pick\` to \`fixup\` (or \`f\`) for commits that should melt into the one above, \`reword\` to edit a message, and reorder lines to group related changes:

\`\`\`
pick 3f2a1c9 add filter chips
f 8b1d0e2 wip
f c44e9a7 fix
f 9a6b2d4 fix again
pick 1e07f3b add tests
\`\`\`

Save and close. Then push with:

\`\`\`bash
git push --force-with-lease
\`\`\`

\`--force-with-lease\` refuses to overwrite the remote if someone else pushed in the meantime — always prefer it over \`--force\`. Going forward, \`git commit --fixup <sha>\` plus \`git rebase -i --autosquash\` does the reordering for you.`,
      },
    ],
    followUps: [
      {
        user: "How should I resolve a conflict in `package-lock.json`? It's thousands of lines.",
        assistant: md`
Don't resolve it by hand — regenerate it:

\`\`\`bash
git checkout --theirs package-lock.json   # during a rebase, "theirs" is your branch's commit being replayed
npm install                                # re-resolves with package.json from the merge result
git add package-lock.json
git rebase --continue
\`\`\`

Careful with the confusing naming: during a **rebase**, \`--ours\` is the branch you're rebasing *onto* ({{base}}) and \`--theirs\` is your commit. In a **merge** it's the other way round. For lockfiles it doesn't matter much which side you start from, as long as you run \`npm install\` (or \`pnpm install\` / \`yarn\`) afterwards and commit the result. Then run the tests, because resolved versions may have changed.`,
      },
      {
        user: "Push got rejected after the rebase: `! [rejected] {{branch}} -> {{branch}} (non-fast-forward)`. Should I force push?",
        assistant: md`
Yes — that rejection is expected after a rebase, because you rewrote the commits that are already on the remote. Use the safe variant:

\`\`\`bash
git push --force-with-lease origin {{branch}}
\`\`\`

It only overwrites the remote branch if it's still at the commit you last fetched. If a teammate pushed to \`{{branch}}\` in the meantime, it refuses, and you can fetch and incorporate their work instead of deleting it.

Rules of thumb: rebase and force-push freely on *your own* feature branches; never on shared branches like \`{{base}}\`. If others work on your branch too, tell them before force-pushing — they'll need \`git pull --rebase\`.`,
      },
      {
        user: "Merge or rebase — what should our team standardize on?",
        assistant: md`
Both work; what matters is consistency. A common, low-friction convention:

- **Feature branches**: rebase onto \`{{base}}\` to stay current (\`git pull --rebase\`), force-push with lease.
- **Merging PRs**: **squash merge** — one commit per PR on \`{{base}}\`, with the PR title as message. History stays linear and readable, and reverting a feature is a single \`git revert\`.
- **Long-lived release branches**: merge commits, since rewriting them would be painful.

Squash merging loses the individual commits of a PR, which some teams value for \`git bisect\`. If that's you, use rebase-merge and ask for tidy commits in review instead. Either way, set the chosen option as the only allowed merge method in the repository settings.`,
      },
    ],
    points: [
      "Run `git rebase --abort` to cancel a rebase in progress",
      "Use `git reflog` and `git reset --hard HEAD@{n}` to undo a finished rebase",
      "Enable `rerere` so Git remembers conflict resolutions",
      "Regenerate lockfiles with the package manager instead of merging them by hand",
      "Push rewritten branches with `--force-with-lease`, never plain `--force`",
      "Never rebase shared branches like `{{base}}`",
    ],
  },
  {
    key: "node-memory-leak",
    domain: "engineering",
    weight: 1.5,
    subject: "the memory leak",
    vars: {
      nodev: ["18", "20", "22"],
      svc: ["notifications service", "GraphQL gateway", "PDF renderer", "webhook dispatcher", "SSR server"],
      growth: ["about 50 MB per hour", "from 300 MB to 1.5 GB in a day", "until it gets OOM-killed every ~6 hours"],
    },
    titles: [
      "Memory leak in [[Node.js|Node {{nodev}}]] {{svc}}",
      "Debugging {{svc}} memory growth",
    ],
    starts: [
      {
        titles: [
          "Heap keeps growing in [[Node {{nodev}}|the {{svc}}]]",
          "Finding leaks with heap snapshots[[| in {{svc}}]]",
        ],
        user: "Our {{svc}} on Node {{nodev}} grows in memory {{growth}}. [[Restarting helps for a while.|We've been restarting it on a cron job. 🙈|Pods get OOMKilled regularly.]] [[How do I find what's leaking?|How do I track down the leak?|Where do I even start?]]",
        assistant: md`
Compare heap snapshots over time — the objects that keep growing between snapshots are your leak.

1. **Confirm it's the JS heap**: log \`process.memoryUsage()\` every minute. If \`heapUsed\` grows, it's JavaScript objects; if only \`rss\`/\`external\` grows, look at Buffers or native modules.
2. **Take snapshots** in staging under realistic load:
   \`\`\`bash
   node --heapsnapshot-signal=SIGUSR2 dist/server.js
   kill -USR2 <pid>   # snapshot 1, then again after 15–30 min of traffic
   \`\`\`
3. **Compare** in Chrome DevTools → Memory → load both → "Comparison" view, sorted by *Size Delta*. Look at what holds the growing objects in the *Retainers* panel.

The usual suspects in a service like the {{svc}}:
- A module-level \`Map\`/array used as a cache with no size limit or TTL.
- Event listeners added per request and never removed (Node warns with \`MaxListenersExceededWarning\`).
- Closures captured by timers (\`setInterval\`) that are never cleared.
- Per-request objects stored in a global (e.g. for "debugging").

Snapshots pause the process and can be large, so take them on one instance, not all of them.`,
      },
      {
        titles: [
          "JavaScript heap out of memory[[| in {{svc}}]]",
          "Raising --max-old-space-size for {{svc}}?",
          "OOM crash in Node {{nodev}} {{svc}}",
        ],
        user: md`
The {{svc}} crashes with:

\`\`\`
FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory
\`\`\`

[[Should I just raise \`--max-old-space-size\`?|Is bumping \`--max-old-space-size\` the right fix?|It happens [[every few hours|about once a day|only under peak traffic]]. Raise the heap limit?]]`,
        assistant: md`
Raising it buys time, but find out first whether this is a **leak** (memory grows until it dies, regardless of load) or **legitimate peak usage** (a big request, e.g. loading a 500 MB CSV into memory).

- Plot \`heapUsed\` over a day. A saw-tooth that returns to the same baseline is normal; a rising baseline is a leak.
- If it's peaks, stream instead of buffering (\`stream.pipeline\`, cursor-based DB reads), or process in batches.

If you do raise it, set it consistently with the container limit: Node {{nodev}} sizes the heap from available memory, but leave headroom for buffers and native memory — e.g. container limit 2 GiB → \`--max-old-space-size=1536\`.

Add \`--heapsnapshot-near-heap-limit=2\` so Node writes a snapshot automatically just before it dies — that snapshot usually shows the culprit right away.`,
      },
    ],
    followUps: [
      {
        user: "[[The heap snapshot comparison|The snapshot diff]] shows thousands of `IncomingMessage` objects retained by a `Map` in our request logging middleware. 🤦",
        assistant: md`
That's a classic: the middleware stores the request (probably to correlate the response or measure duration) and never deletes it, so every request object, its headers and often its body stay in memory forever.

Fix it by not storing the request at all:

\`\`\`ts
app.use((req, res, next) => {
  const start = process.hrtime.bigint();
  res.on("finish", () => {
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    logger.info({ method: req.method, path: req.path, status: res.statusCode, ms });
  });
  next();
});
\`\`\`

If you need per-request context elsewhere (request id in logs), use \`AsyncLocalStorage\` — it's scoped to the request's async chain and cleaned up automatically.

Afterwards, repeat the snapshot comparison under load to confirm the \`IncomingMessage\` count stays flat.`,
      },
      {
        user: "Can we catch leaks like this before production?",
        assistant: md`
A few cheap guards:

1. **Soak test in CI/staging**: run the service under steady load for 30–60 minutes and assert that \`heapUsed\` after GC at the end is within ~10% of the value after warm-up.
2. **Memory metrics and alerts**: export \`nodejs_heap_size_used_bytes\` (prom-client's default metrics) and alert when the post-GC baseline rises over several hours.
3. **Lint/review rules**: no unbounded module-level collections — use an LRU cache (\`lru-cache\` with \`max\`/\`ttl\`) instead of \`new Map()\` for caches.
4. **Watch warnings**: treat \`MaxListenersExceededWarning\` as an error in tests.

The soak test catches most of it; leaks that need specific traffic patterns usually show up in the alert within a day.`,
      },
      {
        user: "What's the difference between rss, heapTotal, heapUsed and external?",
        assistant: md`
From \`process.memoryUsage()\`:

| Field | Meaning |
|---|---|
| \`rss\` | Resident set size: all memory the OS has given the process (heap, code, stacks, native allocations). What Kubernetes compares to the limit. |
| \`heapTotal\` | Memory V8 has reserved for the JS heap. |
| \`heapUsed\` | Memory actually used by JS objects. Leaks of JS objects show up here. |
| \`external\` | Memory of C++ objects bound to JS objects, e.g. Buffer contents. |
| \`arrayBuffers\` | Part of \`external\`: ArrayBuffers and Buffers. |

If \`rss\` grows but \`heapUsed\` doesn't, suspect Buffers (\`external\`), native addons, or memory fragmentation — switching the allocator (e.g. running with jemalloc) sometimes helps with the last one.`,
      },
    ],
    points: [
      "Log `process.memoryUsage()` to see whether heapUsed or rss grows",
      "Compare two heap snapshots taken 15–30 minutes apart under load",
      "Look at retainers of the objects with the biggest size delta",
      "Replace unbounded module-level Maps with an LRU cache",
      "Use `--heapsnapshot-near-heap-limit` to capture a snapshot before a crash",
      "Use AsyncLocalStorage for per-request context instead of global maps",
      "Run a soak test and alert on a rising post-GC heap baseline",
    ],
  },
  {
    key: "kafka-consumer-lag",
    domain: "engineering",
    weight: 1,
    subject: "the consumer lag",
    vars: {
      topic: ["order-events", "clickstream", "payment-updates", "audit-events", "inventory-changes"],
      group: ["billing-consumer", "analytics-sink", "search-indexer", "fraud-scorer"],
      lag: ["2 million", "450,000", "12 million", "80,000"],
      partitions: ["6", "12", "24"],
    },
    titles: [
      "[[Kafka consumer|Consumer]] lag on {{topic}}",
    ],
    starts: [
      {
        titles: [
          "Consumer group {{group}} falling behind[[| on {{topic}}]]",
          "Scaling Kafka consumers beyond {{partitions}} partitions",
          "{{lag}} messages of lag on {{topic}}",
        ],
        user: "Our `{{group}}` consumer group is {{lag}} messages behind on `{{topic}}` ({{partitions}} partitions) and the lag keeps growing. [[We already doubled the pods.|Adding consumers didn't help.]] What else can we do?",
        assistant: md`
With {{partitions}} partitions, at most {{partitions}} consumers in a group can do work — extra pods sit idle. So first find the actual bottleneck:

\`\`\`bash
kafka-consumer-groups.sh --bootstrap-server $BROKERS --describe --group {{group}}
\`\`\`

Look at the per-partition \`LAG\`. **Even lag everywhere** → consumers are too slow overall. **Lag on one or two partitions** → a hot key or a stuck consumer.

If consumers are simply too slow:
1. **Measure per-message processing time.** Usually it's a synchronous call per message (database write, HTTP request).
2. **Batch**: write 500 records per DB round-trip instead of 1.
3. **Parallelize within a partition** where ordering allows it (e.g. per-key parallelism with a library like Confluent's parallel consumer).
4. **More partitions** if you need more consumers: increasing partitions is possible but changes key → partition mapping for new messages.

Also check \`max.poll.records\` and \`max.poll.interval.ms\`: if processing a batch takes longer than the interval, the consumer is kicked out of the group and rebalances, which looks exactly like "more pods didn't help".`,
      },
      {
        titles: [
          "Kafka rebalancing [[storm|loop]][[| in {{group}}]]",
          "[[max.poll.interval.ms exceeded|Poll timeout rebalances]] in {{group}}",
        ],
        user: "[[Our|The {{group}}|Our {{topic}}]] consumers keep rebalancing every [[few minutes|5–10 minutes|couple of minutes]][[ since [[Tuesday|the last deploy|we added a new enrichment step]]|]] and the logs say `Member ... sending LeaveGroup request to coordinator due to consumer poll timeout has expired`. [[What causes that?|Why?|How do I stop it?|Any idea what's going on?]]",
        assistant: md`
The consumer took longer than \`max.poll.interval.ms\` (default 5 minutes) between two \`poll()\` calls, so the coordinator assumed it was dead and rebalanced the group. During rebalancing *nobody* consumes, lag grows, and the cycle repeats.

Fixes:
- **Smaller batches**: lower \`max.poll.records\` (default 500) so each batch finishes well within the interval.
- **Faster processing**: look for slow external calls; add timeouts to them.
- **Raise \`max.poll.interval.ms\`** only if batches legitimately take long.
- **Cooperative rebalancing**: \`partition.assignment.strategy=CooperativeStickyAssignor\` moves only affected partitions instead of stopping the whole group.
- **Static membership** (\`group.instance.id\` set to the pod name) avoids rebalances on rolling restarts.

Log the duration of each batch — you'll likely see it approaching the 5-minute mark right before each rebalance.`,
      },
    ],
    followUps: [
      {
        user: "Lag is concentrated on partition [[3|7|0]]. One customer produces most of the events.",
        assistant: md`
That's a **hot key**: all events with the same key go to the same partition, so one consumer does most of the work while the others idle.

Options:
1. **Salt the key** for that customer: \`customerId + ":" + (eventSeq % 8)\` spreads it over 8 partitions. You lose strict ordering across the salted sub-keys, so only do it if per-customer ordering isn't required or can be restored downstream.
2. **Key by something finer**: e.g. order id instead of customer id, if ordering only matters per order.
3. **Separate topic** for the very large customer with its own consumer group and more partitions.

Check what ordering your consumers actually need first — it's often "per entity", not "per customer", which makes option 2 the clean fix.`,
      },
      {
        user: "How should we alert on consumer lag?",
        assistant: md`
Alert on **time lag**, not just message count: 100,000 messages might be 2 seconds for \`clickstream\` but 3 hours for \`payment-updates\`.

- Export lag with Burrow, kafka-lag-exporter, or your managed Kafka's metrics (Confluent Cloud, MSK).
- Alert when the *estimated time to catch up* or the *age of the oldest unconsumed message* exceeds the SLA, e.g. > 5 minutes for \`{{topic}}\`, for at least 10 minutes.
- Also alert when lag grows monotonically for 30 minutes even if it's still small — that catches stuck consumers early.

Burrow's status evaluation (OK/WARN/STALL/STOP) is good at distinguishing "slow but catching up" from "stuck".`,
      },
    ],
    points: [
      "A group can't have more active consumers than partitions",
      "Check per-partition lag with `kafka-consumer-groups.sh --describe`",
      "Batch database writes instead of one write per message",
      "Keep batch processing well under `max.poll.interval.ms`",
      "Use the cooperative sticky assignor and static membership to reduce rebalances",
      "Alert on time lag, not only message count",
    ],
  },
  {
    key: "cors-error",
    domain: "engineering",
    weight: 1.5,
    subject: "the CORS issue",
    vars: {
      origin: ["http://localhost:5173", "http://localhost:3000", "https://app.{{companyDomain}}.example", "https://staging.{{companyDomain}}.example"],
      api: ["https://api.{{companyDomain}}.example", "http://localhost:8080", "https://api-staging.{{companyDomain}}.example"],
      server: ["Express", "NGINX", "FastAPI", "Spring Boot", "an AWS API Gateway"],
    },
    titles: [
      "CORS error calling {{api}}",
      "[[Configuring|Setting up]] CORS in {{server}}",
    ],
    starts: [
      {
        titles: [
          "No 'Access-Control-Allow-Origin' header[[| from {{server}}]]",
          "CORS preflight fails[[| with credentials| for {{origin}}]]",
          "CORS from {{origin}} to our API",
        ],
        user: md`
My frontend at \`{{origin}}\` calls our API and the browser says:

\`\`\`
Access to fetch at '{{api}}/v1/me' from origin '{{origin}}' has been blocked by CORS policy: Response to preflight request doesn't pass access control check: No 'Access-Control-Allow-Origin' header is present on the requested resource.
\`\`\`

Postman works fine. The API runs behind {{server}}.`,
        assistant: md`
Postman works because CORS is enforced only by browsers. The browser first sends an \`OPTIONS\` **preflight** (because of the \`Authorization\` header or JSON content type), and your server isn't answering it with the right headers.

The server must respond to the preflight with something like:

\`\`\`
Access-Control-Allow-Origin: {{origin}}
Access-Control-Allow-Methods: GET, POST, PUT, DELETE, OPTIONS
Access-Control-Allow-Headers: Authorization, Content-Type
Access-Control-Allow-Credentials: true
Access-Control-Max-Age: 600
\`\`\`

In Express, for example:

\`\`\`ts
import cors from "cors";
app.use(cors({
  origin: ["{{origin}}", "https://app.{{companyDomain}}.example"],
  credentials: true,
}));
\`\`\`

Check these too:
- The \`OPTIONS\` request must not require authentication — browsers never send credentials with preflights.
- If a proxy or gateway sits in front ({{server}}), it may swallow \`OPTIONS\` or strip the headers. Test with \`curl -i -X OPTIONS {{api}}/v1/me -H "Origin: {{origin}}" -H "Access-Control-Request-Method: GET" -H "Access-Control-Request-Headers: authorization"\`.
- Error responses (401, 500) need the CORS headers too, or the browser hides the real error behind a CORS message.`,
      },
      {
        titles: [
          "[[Access-Control-Allow-Origin *|Wildcard origin]] with [[cookies|credentials]]?",
          "Wildcard CORS with credentials[[| in {{server}}]]",
        ],
        user: "[[Can I just|Is it OK to|Should I just]] set `Access-Control-Allow-Origin: *` [[to make the CORS errors go away|on {{api}}|for now to unblock the frontend]]? [[We send cookies.|We use cookie sessions.|Requests include credentials.]][[ It's only for {{origin}} anyway.|]]",
        assistant: md`
With cookies it won't even work: browsers reject \`Access-Control-Allow-Origin: *\` together with \`Access-Control-Allow-Credentials: true\`. And echoing back whatever \`Origin\` arrives is worse — any website could then make authenticated requests as your logged-in users and read the responses.

Do this instead:

\`\`\`ts
const allowed = new Set(["https://app.{{companyDomain}}.example", "{{origin}}"]);
app.use((req, res, next) => {
  const origin = req.headers.origin;
  if (origin && allowed.has(origin)) {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Access-Control-Allow-Credentials", "true");
    res.setHeader("Vary", "Origin");
  }
  next();
});
\`\`\`

\`Vary: Origin\` keeps caches and CDNs from serving one origin's response to another. For local development, a dev-server proxy (e.g. Vite's \`server.proxy\`) avoids CORS entirely by making the API same-origin.`,
      },
    ],
    followUps: [
      {
        user: "[[That fixed it|Preflight works now]] for GET, but POST still fails and the network tab shows the preflight returned 405.",
        assistant: md`
405 on \`OPTIONS\` means the route exists for \`POST\` but nothing handles \`OPTIONS\` for that path — the CORS middleware probably runs *after* routing, or only on some routes.

- In Express, register \`app.use(cors(...))\` **before** your routes (or add \`app.options("*", cors(...))\`).
- In NGINX, handle it explicitly:
  \`\`\`nginx
  if ($request_method = OPTIONS) {
      add_header Access-Control-Allow-Origin $http_origin always;
      add_header Access-Control-Allow-Methods "GET, POST, PUT, DELETE, OPTIONS" always;
      add_header Access-Control-Allow-Headers "Authorization, Content-Type" always;
      add_header Access-Control-Max-Age 600 always;
      return 204;
  }
  \`\`\`
  (Validate \`$http_origin\` against an allowlist with a \`map\` block before echoing it.)
- In API Gateways, enable CORS on the resource *and* redeploy the stage.

The \`always\` flag in NGINX matters: without it, headers are dropped on error responses.`,
      },
      {
        user: "Why does the browser send a preflight for some requests but not others?",
        assistant: md`
A request skips the preflight only if it's a "simple request":

- Method is \`GET\`, \`HEAD\` or \`POST\`, **and**
- Only CORS-safelisted headers (\`Accept\`, \`Accept-Language\`, \`Content-Language\`, \`Content-Type\`), **and**
- \`Content-Type\` is one of \`text/plain\`, \`multipart/form-data\`, \`application/x-www-form-urlencoded\`.

So \`fetch\` with \`Content-Type: application/json\` or an \`Authorization\` header always preflights. That's by design: those requests couldn't be made by a plain HTML form, so the browser asks the server first.

To reduce the cost, set \`Access-Control-Max-Age\` (e.g. 600 s) so the browser caches the preflight result — Chrome caps it at 2 hours.`,
      },
    ],
    points: [
      "CORS is enforced by browsers only, which is why curl and Postman work",
      "Answer OPTIONS preflights without requiring authentication",
      "Never combine `Allow-Origin: *` with credentials",
      "Echo only allowlisted origins and add `Vary: Origin`",
      "Add CORS headers to error responses too (`always` in NGINX)",
      "Use the dev server's proxy to avoid CORS in local development",
    ],
  },

  // ------------------------------------------------------------------ data and machine learning
  {
    key: "pandas-groupby",
    domain: "data",
    weight: 2,
    subject: "the pandas analysis",
    cases: [
      { df: "sales", key: "region", value: "revenue", date: "order_date" },
      { df: "tickets", key: "team", value: "resolution_hours", date: "opened_at" },
      { df: "sessions", key: "country", value: "duration_s", date: "started_at" },
      { df: "shipments", key: "carrier", value: "transit_days", date: "shipped_at" },
    ],
    vars: { rows: ["1.2M", "350k", "8M", "45,000"], pdv: ["2.1", "2.2", "2.2.3"] },
    titles: [
      "Analyzing {{df}} data in pandas[[| {{pdv}}]]",
    ],
    starts: [
      {
        titles: [
          "Pandas groupby by {{key}} and month",
          "Monthly {{value}} per {{key}}[[| in pandas]]",
          "Pivot table of {{df}} data",
        ],
        user: "[[I have|I've got|Working with]] a `{{df}}` DataFrame ({{rows}} rows) with columns `{{key}}`, `{{value}}` and `{{date}}`. How do I get total and average `{{value}}` per `{{key}}` per month, [[with months as columns|sorted by the biggest total|as a tidy table]]?",
        assistant: md`
Group by the key and a monthly period, aggregate with named aggregations, then pivot if you want months as columns:

\`\`\`python
import pandas as pd

{{df}}["{{date}}"] = pd.to_datetime({{df}}["{{date}}"])
monthly = (
    {{df}}
    .groupby(["{{key}}", {{df}}["{{date}}"].dt.to_period("M")])
    .agg(total=("{{value}}", "sum"), average=("{{value}}", "mean"), n=("{{value}}", "size"))
    .reset_index()
)

# months as columns, one row per {{key}}
wide = monthly.pivot(index="{{key}}", columns="{{date}}", values="total").fillna(0)
wide = wide.loc[wide.sum(axis=1).sort_values(ascending=False).index]
\`\`\`

Notes:
- \`dt.to_period("M")\` keeps calendar months regardless of the day; \`pd.Grouper(key="{{date}}", freq="MS")\` is the alternative if you want timestamps.
- Named aggregations (\`total=(...)\`) give flat column names instead of a MultiIndex.
- Include \`n\` — averages over 3 rows and over 30,000 rows shouldn't be read the same way.

With {{rows}} rows this runs in well under a second.`,
      },
      {
        titles: [
          "SettingWithCopyWarning in pandas[[| {{pdv}}]]",
          "pandas [[copy vs view|.loc vs chained assignment]] warning",
        ],
        user: md`
[[I keep getting this warning and I don't understand it|pandas {{pdv}} keeps printing this|What does this warning mean]]:

\`\`\`
SettingWithCopyWarning: A value is trying to be set on a copy of a slice from a DataFrame.
Try using .loc[row_indexer,col_indexer] = value instead
\`\`\`

Code: \`subset = {{df}}[{{df}}["{{value}}"] > 0]\` then \`subset["flag"] = True\`.[[ Pandas {{pdv}}.| Can I just ignore it?|]]`,
        assistant: md`
\`{{df}}[{{df}}["{{value}}"] > 0]\` *may* return a view or a copy — pandas can't tell which you meant, so it warns that \`subset["flag"] = True\` might not do what you expect (it won't modify \`{{df}}\`, and it may not reliably modify \`subset\` either).

Be explicit about your intent:

\`\`\`python
# you want a separate DataFrame to work with
subset = {{df}}[{{df}}["{{value}}"] > 0].copy()
subset["flag"] = True

# you want to modify the original
{{df}}.loc[{{df}}["{{value}}"] > 0, "flag"] = True
\`\`\`

In pandas 3.0, Copy-on-Write becomes the default and this warning goes away: every selection behaves like a copy, and the original is never modified through a subset. You can opt in now on {{pdv}} with \`pd.options.mode.copy_on_write = True\` and fix whatever breaks.`,
      },
    ],
    followUps: [
      {
        user: "[[Next problem|Another thing]]: in the monthly `{{value}}` per `{{key}}` table, some months are missing for some {{key}} values and the chart has gaps. Can I fill them with zeros?",
        assistant: md`
Yes — reindex against the full set of months:

\`\`\`python
all_months = pd.period_range({{df}}["{{date}}"].min(), {{df}}["{{date}}"].max(), freq="M")
wide = wide.reindex(columns=all_months, fill_value=0)
\`\`\`

For the long format, build the full grid of keys × months and merge:

\`\`\`python
grid = pd.MultiIndex.from_product([monthly["{{key}}"].unique(), all_months], names=["{{key}}", "{{date}}"])
monthly = monthly.set_index(["{{key}}", "{{date}}"]).reindex(grid, fill_value=0).reset_index()
\`\`\`

One caveat: fill \`total\` and \`n\` with 0, but leave \`average\` as NaN — an average of "no data" isn't zero, and plotting it as zero will look like a real drop.`,
      },
      {
        user: "It's getting slow with more data. Any quick wins before switching to something else?",
        assistant: md`
Quick wins, roughly by impact:

1. **Categoricals** for repeated strings: \`{{df}}["{{key}}"] = {{df}}["{{key}}"].astype("category")\` — less memory and much faster groupbys; pass \`observed=True\` to \`groupby\`.
2. **Read only what you need**: \`pd.read_parquet(path, columns=[...])\` instead of CSV; Parquet is 5–20x faster to load.
3. **Avoid \`apply\` with Python functions** per row — vectorize (\`np.where\`, \`.str\` methods, \`.dt\` accessors).
4. **Arrow-backed dtypes**: \`pd.read_parquet(path, dtype_backend="pyarrow")\`.

If it's still slow beyond ~50M rows, Polars or DuckDB handle the same query in a fraction of the time, and DuckDB can even query the DataFrame directly: \`duckdb.sql("SELECT {{key}}, sum({{value}}) FROM {{df}} GROUP BY 1").df()\`.`,
      },
      {
        user: "How do I export this to Excel with [[one sheet per {{key}}|nice formatting]] for {{manager}}?",
        assistant: md`
\`ExcelWriter\` with the openpyxl engine:

\`\`\`python
with pd.ExcelWriter("{{df}}_by_{{key}}.xlsx", engine="openpyxl") as writer:
    wide.to_excel(writer, sheet_name="Overview")
    for name, part in monthly.groupby("{{key}}"):
        part.to_excel(writer, sheet_name=str(name)[:31], index=False)  # Excel caps sheet names at 31 chars
    sheet = writer.sheets["Overview"]
    sheet.freeze_panes = "B2"
    for column in sheet.columns:
        sheet.column_dimensions[column[0].column_letter].width = 14
\`\`\`

Convert \`Period\` columns to strings first (\`monthly["{{date}}"] = monthly["{{date}}"].astype(str)\`), since Excel has no period type. If formatting matters a lot, \`xlsxwriter\` has richer options (number formats, conditional formatting, charts).`,
      },
    ],
    points: [
      "Convert dates with `pd.to_datetime` before grouping",
      "Group by `dt.to_period(\"M\")` for calendar months",
      "Use named aggregations to get flat column names",
      "Use `.copy()` or `.loc` to avoid SettingWithCopyWarning",
      "Reindex against all months to fill gaps, but keep averages as NaN",
      "Use categoricals and Parquet for speed",
      "Report the count next to every average",
    ],
  },
  {
    key: "rag-evaluation",
    domain: "data",
    weight: 2,
    subject: "the RAG evaluation",
    vars: {
      corpus: ["support articles", "internal wiki", "product documentation", "legal contracts", "past conversations"],
      docs: ["4,000", "12,000", "80,000", "600"],
      chunk: ["512", "800", "1,000", "300"],
      model: ["GPT-4o", "Claude", "Llama 3.1 70B", "Mistral Large"],
      vdb: ["pgvector", "Qdrant", "Weaviate", "Elasticsearch", "OpenSearch"],
    },
    titles: [
      "[[Evaluating|Measuring]] RAG [[quality over|over]] {{corpus}}",
      "{{model}} RAG over {{corpus}}: quality check",
    ],
    starts: [
      {
        titles: [
          "RAG retrieval metrics[[: recall@k and MRR| for {{corpus}}]]",
          "Building a RAG eval set[[| for {{corpus}}]]",
          "[[Hallucinations|Wrong answers]] in our RAG [[answers|assistant]]",
        ],
        user: "We built a RAG assistant over our {{corpus}} ({{docs}} docs, {{vdb}}, {{model}} for answers). People say it's \"sometimes wrong\". How do we evaluate it properly instead of vibes?",
        assistant: md`
Evaluate **retrieval** and **generation** separately — otherwise you can't tell whether a bad answer came from missing context or from the model.

**1. Build an eval set** (start with 100–200 questions):
- Real questions from logs, plus a few written by domain experts.
- For each: the doc(s) that contain the answer, and a short reference answer.
- Include hard cases: questions with no answer in the corpus, questions needing two documents, ambiguous wording.

**2. Retrieval metrics** (cheap, deterministic, run on every change):
- **Recall@k**: share of questions where a relevant doc is in the top k (k = what you pass to the model, e.g. 5).
- **MRR**: how high the first relevant doc ranks.

**3. Answer metrics**:
- **Faithfulness**: is every claim supported by the retrieved context? (LLM-as-judge with a strict rubric, spot-checked by humans.)
- **Correctness** against the reference answer.
- **Abstention**: does it say "I don't know" for unanswerable questions?

In my experience, retrieval is the bottleneck more often than the model: if recall@5 is 70%, the best generator can't exceed that. Want a small Python harness for the retrieval part?`,
      },
      {
        titles: [
          "Chunk size for {{corpus}} RAG[[| ({{chunk}} tokens?)]]",
          "Chunking strategy for {{docs}} docs",
          "[[Improving|Tuning]] retrieval in {{vdb}}",
        ],
        user: "What chunk size should we use for our {{corpus}}? Right now it's {{chunk}} tokens with no overlap and retrieval feels random.",
        assistant: md`
There's no universal best — it depends on how your documents are structured and how specific the questions are — so treat it as something to measure with your eval set rather than pick.

Heuristics that usually help more than the raw size:
- **Split on structure**, not fixed token counts: headings, sections, list items. A chunk that starts mid-sentence embeds poorly.
- **Prepend context** to each chunk before embedding: document title and section path (\`"Billing > Refunds > Partial refunds: ..."\`). This often helps more than any size change.
- **Small overlap** (10–15%) so answers spanning a boundary aren't lost.
- **Retrieve small, read big**: embed ~300-token chunks for precise matching, but pass the surrounding section to the model.

Then run a grid: e.g. 256 / 512 / 1,024 tokens × with/without title prefix, and compare recall@5 on the same questions. It's a one-afternoon experiment with {{docs}} documents.`,
      },
    ],
    followUps: [
      {
        user: "[[Can you give me|Could you write]] a small harness for recall@k and MRR?",
        assistant: md`
\`\`\`python
import json
from statistics import mean

def evaluate(retrieve, eval_path: str, k: int = 5) -> dict:
    """retrieve(question, k) -> list of doc ids, best first."""
    recalls, reciprocal_ranks, misses = [], [], []
    with open(eval_path) as f:
        cases = [json.loads(line) for line in f]
    for case in cases:
        ranked = retrieve(case["question"], k)
        relevant = set(case["relevant_doc_ids"])
        hit_ranks = [i + 1 for i, doc in enumerate(ranked) if doc in relevant]
        recalls.append(1.0 if hit_ranks else 0.0)
        reciprocal_ranks.append(1.0 / hit_ranks[0] if hit_ranks else 0.0)
        if not hit_ranks:
            misses.append(case["question"])
    return {"n": len(cases), f"recall@{k}": mean(recalls), "mrr": mean(reciprocal_ranks), "misses": misses[:20]}
\`\`\`

The eval file is JSON Lines: \`{"question": "...", "relevant_doc_ids": ["kb-1042"]}\`. Read the \`misses\` after every run — they tell you more than the averages (often: synonyms the embedding misses, product names, error codes). Store results per run with the config (chunking, model, k) so you can compare over time.`,
      },
      {
        user: "Recall@5 is [[0.62|0.71|0.55]]. Misses are mostly questions with exact product names and error codes. What helps there?",
        assistant: md`
That pattern is typical: dense embeddings are good at paraphrases but weak at exact tokens like \`ERR_SYNC_409\` or SKU names. The standard fix is **hybrid search**:

1. Run BM25/full-text search and vector search in parallel ({{vdb}} supports both, or pair Postgres \`tsvector\` with pgvector).
2. Merge with **Reciprocal Rank Fusion**: \`score(d) = Σ 1 / (60 + rank_i(d))\` over both lists.
3. Optionally **rerank** the top 30–50 with a cross-encoder (e.g. a bge or Cohere reranker) before taking the top 5.

Hybrid + RRF alone often lifts recall@5 by 10–20 points on queries like yours. Re-run the harness per change so you know which step helped.`,
      },
      {
        user: "How do we check faithfulness without reading every answer ourselves?",
        assistant: md`
Use an LLM judge, but make it narrow and verify it:

- **Claim-level check**: ask the judge to list each factual claim in the answer and mark it *supported / not supported* by the retrieved context only. Faithfulness = supported / total claims.
- **Strict prompt**: "Use only the context. If a claim needs outside knowledge, mark it unsupported." Use a strong model as judge, at temperature 0.
- **Calibrate**: label 50 answers by hand and compare with the judge. If agreement is below ~85%, fix the rubric before trusting the numbers.
- **Track over time**, not as an absolute: it's most useful for comparing prompt or model versions.

Libraries like Ragas or DeepEval implement these metrics, but a 40-line custom judge you understand is often easier to trust.`,
      },
      {
        user: "What should the assistant do when the {{corpus}} doesn't contain the answer?",
        assistant: md`
Say so — and test that it does. In the system prompt: "If the context doesn't contain the answer, say you couldn't find it in the {{corpus}} and suggest where to look or whom to ask. Do not guess."

Then:
- Add 15–20% **unanswerable questions** to the eval set and measure the abstention rate.
- Use a **relevance threshold**: if the best retrieval score is below a tuned cutoff, skip generation and return the "not found" answer directly.
- **Cite sources** (doc titles and links) in every answer, so users can verify and notice when citations don't match.

A RAG system that says "I couldn't find that" 10% of the time is trusted far more than one that is confidently wrong 5% of the time.`,
      },
    ],
    points: [
      "Evaluate retrieval and generation separately",
      "Build an eval set of 100–200 real questions with known relevant documents",
      "Track recall@k and MRR on every change",
      "Use hybrid search (BM25 + vectors) with Reciprocal Rank Fusion for exact terms",
      "Chunk on document structure and prepend titles before embedding",
      "Measure faithfulness with a calibrated LLM judge",
      "Include unanswerable questions and measure abstention",
    ],
  },
  {
    key: "embeddings-similarity",
    domain: "data",
    weight: 1.5,
    subject: "the embeddings setup",
    vars: {
      emodel: ["text-embedding-3-small", "text-embedding-3-large", "bge-m3", "nomic-embed-text", "e5-large-v2"],
      dims: ["384", "768", "1024", "1536", "3072"],
      items: ["2 million support tickets", "300k product descriptions", "50k research abstracts", "1.5 million chat messages"],
    },
    titles: [
      "[[Embedding|Indexing]] {{items}} with {{emodel}}",
    ],
    starts: [
      {
        titles: [
          "Choosing an embedding model[[| for {{items}}]]",
          "Semantic search over {{items}}[[| with {{emodel}}]]",
          "{{dims}}-dim embeddings: storage and speed",
        ],
        user: "We want semantic search over {{items}}. [[Which embedding model should we use|How do we pick an embedding model|What embedding model would you pick]], and does the dimension matter? [[Looking at {{emodel}} ({{dims}} dims) right now.|Currently testing {{emodel}} ({{dims}} dims).|Someone suggested {{emodel}}.]]",
        assistant: md`
Pick with your own data rather than leaderboard scores — MTEB rankings shift a lot by domain and language. A quick process:

1. Take ~200 real queries with known relevant items.
2. Embed a sample (say 50k items) with 3–4 candidates, e.g. {{emodel}}, a multilingual model like bge-m3 if you have non-English text, and one small local model.
3. Compare recall@10 and latency/cost.

About dimensions:
- Storage and index memory scale linearly: {{dims}} float32 dims = {{dims}} × 4 bytes per vector, before index overhead. For millions of items that adds up fast.
- Many current models support **shortened embeddings** (Matryoshka): you can keep the first 256–512 dims with a small quality loss.
- Quantization (int8 or binary with rescoring) cuts memory 4–32x, often with little recall loss.

Also decide early: one vector per item or per chunk? For long items, chunking plus "max similarity per item" usually beats one averaged vector.`,
      },
      {
        titles: [
          "[[Cosine similarity vs dot product|Cosine or dot product]] for {{emodel}}",
          "What does a similarity score from {{emodel}} mean?",
          "Similarity [[thresholds|cutoffs]] for {{emodel}}",
        ],
        user: "Should I use cosine similarity or dot product for {{emodel}} embeddings? [[And what does a score of 0.82 actually mean?|Also, is a score of 0.[[78|82|85]] good?|And where should the similarity threshold be?]]",
        assistant: md`
If the vectors are **normalized to length 1** (most embedding APIs, including {{emodel}}, return normalized vectors — check the docs or compute the norm), cosine similarity and dot product give identical rankings, and dot product is slightly cheaper. If not normalized, use cosine, or normalize once at write time.

As for 0.82: the absolute value has no universal meaning. Scores depend on the model — some models put almost everything between 0.7 and 0.9, others spread 0.1–0.9. So:

- Don't hard-code thresholds from blog posts; **calibrate on your data**: look at score distributions for known-relevant vs known-irrelevant pairs and pick the cutoff that gives the precision you want.
- Compare scores only within the same model and version. Re-embed everything when you switch models — vectors from different models aren't comparable.`,
      },
    ],
    followUps: [
      {
        user: "We're going with pgvector. How should we index {{items}}?",
        assistant: md`
Use an **HNSW** index — better recall/latency trade-off than IVFFlat, and no training step:

\`\`\`sql
CREATE EXTENSION IF NOT EXISTS vector;
ALTER TABLE items ADD COLUMN embedding vector({{dims}});
CREATE INDEX CONCURRENTLY items_embedding_hnsw
  ON items USING hnsw (embedding vector_cosine_ops)
  WITH (m = 16, ef_construction = 64);

-- per query: higher = better recall, slower
SET hnsw.ef_search = 80;
SELECT id, title FROM items ORDER BY embedding <=> $1 LIMIT 10;
\`\`\`

Notes:
- The operator must match the opclass: \`<=>\` with \`vector_cosine_ops\`, \`<#>\` with \`vector_ip_ops\`.
- Building HNSW on millions of rows needs memory: raise \`maintenance_work_mem\` (e.g. 4–8 GB) for the build, or it gets very slow.
- Above 2,000 dims, plain \`vector\` can't be indexed with HNSW; use \`halfvec\` (up to 4,000 dims) — which also halves memory.
- Filtering (\`WHERE tenant_id = $2\`) plus ANN can return fewer than 10 rows; pgvector 0.8's iterative scans (\`SET hnsw.iterative_scan = relaxed_order\`) help.`,
      },
      {
        user: "How do we handle re-embedding when we change the model later?",
        assistant: md`
Plan for it from the start, because you will switch models:

- Store **model name and version** with every vector (\`embedding_model = '{{emodel}}'\`).
- Keep the **source text** you embedded (or a hash of it) so you can re-embed without recomputing inputs.
- Migrate with a **new column or table**: backfill the new embeddings in batches, build the index, compare quality on your eval set, switch reads with a flag, then drop the old column. Never mix two models' vectors in one index.
- Budget it: e.g. {{items}} at a few hundred tokens each is a one-off cost you can estimate upfront; batch requests (hundreds of inputs per API call) and run them as a background job.`,
      },
      {
        user: "Can embeddings handle multilingual text? Some tickets are in German, Spanish and Japanese (日本語).",
        assistant: md`
Yes, with a multilingual model: bge-m3, multilingual-e5, Cohere's multilingual models and OpenAI's text-embedding-3 models all map different languages into a shared space, so a German query like „Rechnung doppelt abgebucht“ can find an English ticket "invoice charged twice".

Things to check:
- **Evaluate per language**: quality for Japanese is often noticeably lower than for English — measure it with a few dozen Japanese queries.
- **Tokenization cost**: Japanese and other non-Latin scripts use more tokens per character, so budget more.
- **Hybrid search** still needs a language-aware full-text analyzer per language (e.g. a Japanese tokenizer like kuromoji) for exact-term matching.
- **Normalization**: apply Unicode NFC normalization before embedding, so "café" written two ways embeds the same.`,
      },
    ],
    points: [
      "Choose the embedding model with recall@10 on your own queries, not leaderboards",
      "Normalize vectors; then cosine and dot product rank identically",
      "Calibrate similarity thresholds per model on labelled pairs",
      "Use an HNSW index and tune `ef_search` for recall",
      "Store the model name and version with every vector",
      "Shorten or quantize embeddings to save memory",
      "Apply Unicode NFC normalization before embedding",
    ],
  },
  {
    key: "ab-test-significance",
    domain: "data",
    weight: 1.5,
    subject: "the A/B test",
    cases: [
      { change: "new checkout button", metric: "conversion rate", ctrl: "3.10%", treat: "3.42%", n: "48,000" },
      { change: "shorter signup form", metric: "signup completion", ctrl: "41.2%", treat: "44.0%", n: "9,500" },
      { change: "annual plan discount banner", metric: "upgrade rate", ctrl: "1.8%", treat: "2.1%", n: "22,000" },
      { change: "onboarding checklist", metric: "week-1 retention", ctrl: "36%", treat: "38%", n: "6,200" },
    ],
    titles: [
      "A/B test on {{metric}}[[| for the {{change}}]]",
    ],
    starts: [
      {
        titles: [
          "Is the {{change}} [[test|result]] significant?",
          "Interpreting p-value for {{change}}",
          "A/B result: {{metric}} {{ctrl}} vs {{treat}}",
        ],
        user: "[[Our|The]] A/B test for the {{change}}[[: | has been running for [[9 days|two weeks|three weeks]]: ]]control {{metric}} {{ctrl}}, variant {{treat}}, about {{n}} users per arm. [[Is that significant?|Is the difference real?|Can I trust this?]] [[My PM wants to ship today.|Can we call it?|{{manager}} is asking for a decision.|]]",
        assistant: md`
For a difference in proportions, a two-proportion z-test is the standard check. In Python:

\`\`\`python
from statsmodels.stats.proportion import proportions_ztest, confint_proportions_2indep

n = {{n}}  # per arm; replace with exact counts
successes = [round(n * p) for p in (ctrl, treat)]  # use the real conversion counts
stat, p_value = proportions_ztest(successes, [n, n])
low, high = confint_proportions_2indep(successes[1], n, successes[0], n, compare="diff")
print(f"p = {p_value:.4f}, difference CI: [{low:.4%}, {high:.4%}]")
\`\`\`

Plug in the real counts rather than rounded rates — with rates like {{ctrl}} vs {{treat}}, small rounding moves the p-value noticeably.

Before calling it, check three things that matter more than the p-value itself:
1. **Was the sample size fixed in advance?** If you've been checking daily and stopping at the first p < 0.05, the false-positive rate is much higher than 5%.
2. **Full weekly cycles**: run at least 1–2 full weeks so weekday/weekend behaviour is balanced.
3. **Sample ratio mismatch**: if arms should be 50/50 but are 51.5/48.5, the assignment is broken and results aren't trustworthy.

Report the **confidence interval of the difference**, not just "significant": "+0.3 points, 95% CI [+0.05, +0.6]" is what the decision should rest on.`,
      },
      {
        titles: [
          "A/B test sample size for {{metric}}",
          "[[Power calculation|Sample size]] for {{change}} test",
          "How long to run the {{change}} test",
        ],
        user: "How many users [[do we need|per variant do we need]] for an A/B test on {{metric}}? Baseline is {{ctrl}} and we'd care about a [[10%|5%|15%|20%]] relative improvement.[[ We get about [[3,000|8,000|20,000]] visitors a day.| Trying to decide if it's even worth testing.|]]",
        assistant: md`
Use a power calculation — for proportions:

\`\`\`python
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

baseline = 0.031           # your baseline as a fraction
target = baseline * 1.10   # the relative lift you care about
effect = proportion_effectsize(target, baseline)
n = NormalIndPower().solve_power(effect_size=effect, alpha=0.05, power=0.8, alternative="two-sided")
print(round(n))  # users per arm
\`\`\`

Rules of thumb: halving the detectable effect roughly **quadruples** the required sample, and low baselines (a few percent) need far more users than high ones. Small relative lifts on a low-baseline metric often require hundreds of thousands of users per arm.

Then divide by your daily traffic to get the duration, and round up to full weeks. If the answer is "4 months", consider a more sensitive metric (e.g. add-to-cart instead of purchase), CUPED variance reduction using pre-experiment behaviour, or testing a bolder change.`,
      },
    ],
    followUps: [
      {
        user: "We looked at the dashboard every day and stopped when it hit p < 0.05 on day [[5|4|6]]. Is that a problem?",
        assistant: md`
Yes, unfortunately — that's "peeking". Each look is another chance for random noise to cross the threshold, so stopping at the first significant result inflates false positives well beyond 5% (with daily looks over a few weeks, it can reach 20–30%).

What to do now:
- Treat the result as **promising, not confirmed**. Let the test run to the pre-planned sample size and evaluate once.
- Or re-run it cleanly if the decision matters.

For the future, if you want to look early legitimately, use a method built for it: **sequential testing** (e.g. mSPRT / always-valid p-values, which many experimentation platforms offer), or group-sequential designs with an alpha-spending function (O'Brien–Fleming) and 2–3 planned interim looks.`,
      },
      {
        user: "The result is significant overall, but {{manager}} wants to see it broken down by country and device. Good idea?",
        assistant: md`
As exploration, fine; as the basis for decisions, careful. With 10 countries × 3 devices you run 30 comparisons, and at α = 0.05 about 1–2 will be "significant" by chance alone.

Guidelines:
- Decide on the **segments you care about before the test** (e.g. mobile vs desktop) and only treat those as confirmatory.
- For exploratory cuts, correct for multiple comparisons (Benjamini–Hochberg) or label them clearly as hypotheses.
- Segments have far smaller samples, so intervals are wide: "Spain: +1.2 points, CI [−0.8, +3.2]" means *we don't know*, not "it works in Spain".

If a segment looks interesting, that's a candidate for a follow-up test targeted at it.`,
      },
    ],
    points: [
      "Fix the sample size with a power calculation before starting",
      "Run for full weekly cycles",
      "Check for sample ratio mismatch before reading results",
      "Report the confidence interval of the difference, not just the p-value",
      "Don't stop at the first p < 0.05; use sequential testing if you must peek",
      "Correct for multiple comparisons when slicing by segment",
    ],
  },
  {
    key: "spreadsheet-formulas",
    domain: "data",
    weight: 1,
    subject: "the spreadsheet",
    vars: {
      app: ["Excel", "Google Sheets"],
      sheet: ["Orders", "Leads", "Inventory", "Timesheets", "Budget 2026"],
      lookupCol: ["customer ID", "SKU", "employee number", "email address"],
    },
    titles: [
      "{{app}} formulas for [[the|my]] {{sheet}} sheet",
    ],
    starts: [
      {
        titles: [
          "XLOOKUP [[across sheets|by {{lookupCol}}]] in {{app}}",
          "VLOOKUP returns #N/A[[| in {{sheet}}]]",
          "Lookup by {{lookupCol}} in {{app}}",
        ],
        user: "In {{app}}, I want to pull the region from a `Customers` sheet into my `{{sheet}}` sheet by {{lookupCol}}. [[VLOOKUP gives `#N/A` for rows that clearly exist.|VLOOKUP returns `#N/A` for about half the rows, even though the values are there.|Half my lookups come back `#N/A`.]] [[What am I doing wrong?|Why?|Any idea?]]",
        assistant: md`
\`#N/A\` for values that "clearly exist" is almost always one of these:

1. **Exact match not set**: VLOOKUP's last argument defaults to approximate match. Use \`FALSE\`: \`=VLOOKUP(A2, Customers!A:D, 3, FALSE)\`.
2. **Invisible differences**: trailing spaces or non-breaking spaces from exports. Test with \`=LEN(A2)\` vs \`=LEN(Customers!A2)\`, fix with \`TRIM()\` (and \`SUBSTITUTE(A2, CHAR(160), "")\` for non-breaking spaces).
3. **Numbers stored as text** in one sheet and as numbers in the other — IDs like \`00123\` are classic. Compare \`=ISNUMBER(A2)\` on both sides.

Better formula overall — XLOOKUP (Excel 365 and Google Sheets):

\`\`\`
=XLOOKUP(TRIM(A2), Customers!A:A, Customers!C:C, "not found")
\`\`\`

It doesn't depend on column positions, defaults to exact match, and lets you set a fallback instead of \`#N/A\`.`,
      },
      {
        titles: [
          "SUMIFS by month[[ and category|]] in {{app}}",
          "Monthly totals in {{sheet}}[[| ({{app}})]]",
          "Sum by month and category in {{app}}",
        ],
        user: "How do I sum the `Amount` column in `{{sheet}}` per month and category in {{app}}? Dates are in column A, category in B, amount in D.[[ There are about [[2,000|8,000|500]] rows.|]]",
        assistant: md`
With a summary table where \`F2\` holds the first day of a month (e.g. 2026-01-01) and \`G1\` a category:

\`\`\`
=SUMIFS($D:$D, $B:$B, G$1, $A:$A, ">="&$F2, $A:$A, "<"&EDATE($F2, 1))
\`\`\`

Drag it right and down to fill the grid. \`EDATE($F2, 1)\` gives the first day of the next month, so each cell covers exactly one calendar month.

Alternatives:
- **Pivot table** (Insert → PivotTable), dates grouped by month: fastest if you don't need formulas.
- **Google Sheets**: \`=QUERY(A:D, "select month(A)+1, B, sum(D) where A is not null group by month(A)+1, B")\` — \`month()\` is zero-based there, hence the \`+1\`.

Make sure column A contains real dates, not text: \`=ISNUMBER(A2)\` should be TRUE.`,
      },
    ],
    followUps: [
      {
        user: "Worked! Now how do I find duplicate {{lookupCol}}s in the sheet?",
        assistant: md`
To **flag** duplicates in a helper column:

\`\`\`
=IF(COUNTIF($A$2:$A$5000, A2) > 1, "duplicate", "")
\`\`\`

To **highlight** them: Conditional formatting → "Use a formula" → \`=COUNTIF($A:$A, $A1) > 1\` with a fill color.

To get a **clean unique list** (Excel 365 / Google Sheets): \`=UNIQUE(A2:A5000)\`, or for whole rows \`=UNIQUE(A2:F5000)\`.

To **delete** them: Excel → Data → Remove Duplicates; Google Sheets → Data → Data cleanup → Remove duplicates. Make a copy of the sheet first, and apply \`TRIM\`/\`LOWER\` beforehand if the duplicates differ only in spaces or capitalization (common with email addresses).`,
      },
      {
        user: "Can I make the lookup case-insensitive and ignore extra spaces everywhere, not just in one cell?",
        assistant: md`
XLOOKUP is already case-insensitive, so spaces are the main issue. Two approaches:

**In the formula** (Excel 365 / Sheets, with array support):

\`\`\`
=XLOOKUP(LOWER(TRIM(A2)), LOWER(TRIM(Customers!A2:A5000)), Customers!C2:C5000, "not found")
\`\`\`

Use bounded ranges (\`A2:A5000\`) rather than whole columns here, or it gets slow.

**Clean once at the source** (better for large sheets): add a helper column in \`Customers\` with \`=LOWER(TRIM(A2))\`, look up against it, or clean the data with Power Query (Excel) when importing. Cleaning once beats repeating the cleanup in thousands of formulas.`,
      },
    ],
    points: [
      "Use exact match (`FALSE`) or XLOOKUP instead of approximate VLOOKUP",
      "Check for trailing and non-breaking spaces with `LEN` and `TRIM`",
      "Make sure IDs have the same type (number vs text) on both sides",
      "Use SUMIFS with `EDATE` for monthly totals",
      "Use `UNIQUE` or Remove Duplicates, on a copy",
      "Clean data once at the source instead of in every formula",
    ],
  },

  // ------------------------------------------------------------------ writing
  {
    key: "cover-letter",
    domain: "writing",
    weight: 1.5,
    subject: "the cover letter",
    cases: [
      { role: "Senior Backend Engineer", target: "Stripe", years: "7", skill: "payment systems in Go and PostgreSQL", win: "cut checkout latency by 38%" },
      { role: "Product Designer", target: "Figma", years: "5", skill: "design systems and user research", win: "led a redesign that lifted activation from 31% to 44%" },
      { role: "Data Analyst", target: "Spotify", years: "3", skill: "SQL, dbt and experimentation", win: "built the churn dashboard the leadership team uses weekly" },
      { role: "Senior Engineering Manager", target: "Shopify", years: "10", skill: "growing teams from 4 to 15 engineers", win: "reduced on-call pages by 60% in a year" },
      { role: "Marketing Manager", target: "Notion", years: "6", skill: "B2B content and lifecycle campaigns", win: "grew organic signups 3x in 18 months" },
    ],
    titles: [
      "Cover letter for {{role}} at {{target}}",
      "{{target}} [[application|job]] cover letter",
    ],
    starts: [
      {
        titles: [
          "Tailoring my cover letter for {{role}}",
          "{{role}} cover letter draft",
          "Writing a {{role}} cover letter[[| for {{target}}]]",
        ],
        user: "[[Can you help me write|Could you draft|I need]] a cover letter for a {{role}} position at {{target}}? I have {{years}} years of experience, mostly in {{skill}}. My biggest achievement: I {{win}}. [[Keep it under 300 words.|Not too formal please.|I hate writing these.|Deadline is {{weekday}}.|]]",
        assistant: md`
Here's a draft you can adapt — it leads with the achievement instead of a generic opening:

---

Dear {{target}} hiring team,

In my current role I {{win}}. That's the kind of work I want to keep doing, and the {{role}} opening at {{target}} looks like the best place to do it.

Over the past {{years}} years I've focused on {{skill}}. What I enjoy most is the part between the idea and the measurable result: understanding what actually blocks people, proposing something small enough to ship quickly, and then checking the numbers honestly.

A few things I'd bring to the team:
- Ownership from problem definition to rollout and follow-up metrics
- Clear written communication — design docs, decision records, and updates that non-specialists can follow
- A habit of making the people around me more effective, through reviews, pairing and documentation

I've followed {{target}}'s work for a while, [[and the way you write about your product decisions publicly is a big part of why I'm applying|and I'd love to contribute to the problems your team is tackling next]].

I'd welcome the chance to talk about how I could contribute.

Best regards,
[Your name]

---

It's around 230 words. To make it really yours, replace the paragraph before the closing with one *specific* reason for {{target}} — a product feature, a talk, or a blog post you liked. That sentence is what recruiters notice.`,
      },
      {
        titles: [
          "Better opening line for {{target}} application",
          "Rewriting a bland cover letter opening[[| for {{target}}]]",
          "Cover letter intro for {{role}}",
        ],
        user: "Here's my cover letter opening for {{target}}: \"I am writing to express my interest in the {{role}} position at your esteemed company.\" [[It feels bland.|Sounds like everyone else's.|Feels so generic.]] [[Can you suggest better openings?|Any better ideas?|How can I make it stand out?]]",
        assistant: md`
It is bland — recruiters read that exact sentence dozens of times a day. Open with something only *you* could write. Options:

1. **Lead with a result:** "Last year I {{win}} — and I'd like to do the same kind of work as a {{role}} at {{target}}."
2. **Lead with the connection:** "I've used {{target}} every day for three years, and the part I keep thinking about is how [specific thing] works — which is exactly what this {{role}} role is about."
3. **Lead with the problem:** "Most teams I've worked with struggled with [problem the role solves]. For the past {{years}} years, solving it has been my job."

Option 1 is the safest and works for almost any application. Whichever you choose, the second sentence should connect it to what the job posting asks for, using their wording where it honestly fits.`,
      },
    ],
    followUps: [
      {
        user: "The middle part of my letter could be anyone's. [[How do I make it less generic?|Can you help me make it more specific?]]",
        assistant: md`
Agreed — the bullets are the weakest part. Replace them with one short story (situation → what you did → result) that maps to the job posting:

> Last spring our team kept missing deadlines because requirements changed mid-sprint. I proposed a one-page brief that product and engineering signed off on before work started, and ran the first five myself. Within two quarters, rework dropped by about a third, and the template is now used across the department.

Then one sentence linking it to {{target}}: "I understand the {{role}} role involves a lot of cross-team work, and this is the part of the job I'm best at."

A specific story with a number beats three adjectives every time. If you tell me a real situation from your work, I'll write it in this shape.`,
      },
      {
        user: "Should I mention that I'm switching from a different industry?",
        assistant: md`
Yes, briefly and confidently — they'll see it on your CV anyway, so it's better to frame it yourself:

> "After {{years}} years in [previous industry], I'm moving into [new industry] because [honest, specific reason]. The skills transfer more directly than you might expect: [one concrete example]."

Don't apologize for the switch, and don't spend more than two sentences on it. Focus on what transfers: domain knowledge that gives you a different perspective is an asset, especially if {{target}} sells to customers in your old industry.`,
      },
      {
        user: "What about the salary expectations they ask for in the form?",
        assistant: md`
Keep it out of the cover letter itself. For the form field:

- If it's optional, leave it blank or write "open to discussion based on the full package".
- If it's required, give a **range** based on research (levels.fyi, Glassdoor, industry salary surveys, or people you know in similar roles), with your real target near the bottom of the range.
- Mention it's for base salary and you're considering the total package (equity, bonus, benefits).

In many places (e.g. several US states and, increasingly, the EU under the Pay Transparency Directive) employers must publish a range — if {{target}} lists one, anchor to it.`,
      },
    ],
    points: [
      "Open with a concrete achievement instead of \"I am writing to express my interest\"",
      "Tell one short story with a measurable result",
      "Give one specific reason why {{target}}",
      "Mirror the job posting's wording where it honestly fits",
      "Keep it under 300 words",
      "Leave salary out of the letter itself",
    ],
  },
  {
    key: "product-launch-blog-post",
    domain: "writing",
    weight: 1.5,
    subject: "the launch post",
    cases: [
      { product: "Smart Filters", what: "saved searches that update automatically", audience: "support teams" },
      { product: "Offline Mode", what: "full editing without an internet connection", audience: "field technicians" },
      { product: "Insights 2.0", what: "a rebuilt analytics dashboard with custom metrics", audience: "product managers" },
      { product: "Team Spaces", what: "shared workspaces with granular permissions", audience: "agencies" },
      { product: "AI Summaries", what: "one-click summaries of long threads", audience: "busy managers" },
    ],
    vars: { date: ["March 12", "June 3", "September 9", "November 18"] },
    titles: [
      "Launch blog post for {{product}}[[| ({{company}})]]",
      "Announcing {{product}}: draft",
    ],
    starts: [
      {
        titles: [
          "{{product}} launch post for {{audience}}",
          "Editing the {{product}} announcement",
          "Blog post: introducing {{product}}",
        ],
        user: "We're launching {{product}} on {{date}} — {{what}}, built mainly for {{audience}}. Can you draft a launch blog post? ~500 words, friendly but not hype-y. Company is {{company}}.",
        assistant: md`
**Introducing {{product}}: [[less busywork for {{audience}}|built for how {{audience}} actually work]]**

Every week we talk to {{audience}} using {{company}}, and one theme keeps coming up: too much time goes into work *around* the work. Today we're launching **{{product}}** — {{what}} — to take some of that away.

**What it does**

{{product}} is available to all customers starting {{date}}. In short:
- **Set it up once.** It takes about two minutes, and there's nothing to install.
- **It stays up to date.** Changes show up automatically, so you're never looking at stale information.
- **It fits your existing workflow.** It works with the views, permissions and integrations you already use.

**Why we built it**

During the beta, teams told us they spent 30–45 minutes a day on the tasks {{product}} now handles. One team lead put it this way: *"I didn't realize how much of my morning went into this until it stopped."*

**How to get started**

Open {{company}}, look for **{{product}}** in the sidebar, and follow the short setup. Our help center has a step-by-step guide, and we're running a live walkthrough on {{date}} at 5 pm CET for anyone who wants to see it in action.

**What's next**

This is the first version. Over the next months we'll add [[deeper integrations and admin controls|more customization and reporting]], based on your feedback. Tell us what you think — reply to this post or reach out to your account manager.

---

It's about 300 words; I kept it shorter because launch posts get skimmed. If you share real beta numbers or a customer quote you're allowed to use, I'll swap out the placeholders — the quote and the "30–45 minutes" claim need to be real before publishing.`,
      },
      {
        titles: [
          "Headline ideas for {{product}} launch",
          "{{product}} launch headlines",
          "Blog title options for {{product}}[[| launch]]",
        ],
        user: "[[Give me|Can you suggest|Brainstorm]] [[10|8|a few|some]] headline options for the {{product}} launch [[post|blog post|announcement]]. Audience: {{audience}}.[[ Nothing too salesy.| Launch is {{date}}.|]]",
        assistant: md`
Grouped by style:

**Benefit-first**
1. {{product}}: spend less time on busywork, more on what matters
2. Meet {{product}} — {{what}}
3. Fewer clicks, fresher data: introducing {{product}}

**Audience-first**
4. Built for {{audience}}: say hello to {{product}}
5. What {{audience}} asked for, shipped: {{product}}

**Straightforward**
6. Introducing {{product}}
7. {{product}} is now available to all {{company}} customers

**Curiosity**
8. We watched {{audience}} work for a month. Here's what we built.

For a company blog, I'd go with #2 or #4: they say what it is and who it's for, which also helps SEO and social previews. #8 works well as a LinkedIn hook but less as a blog title.`,
      },
    ],
    followUps: [
      {
        user: "Can you also write a [[LinkedIn post|short LinkedIn version]] and one tweet for the launch?",
        assistant: md`
**LinkedIn** (~100 words):

> Today we're launching {{product}} at {{company}} 🎉
>
> {{audience}} told us the same thing over and over: too much time goes into work around the work. {{product}} — {{what}} — takes some of that away.
>
> ✅ Set up in two minutes
> ✅ Always up to date
> ✅ Works with your existing workflow
>
> Huge thanks to the beta teams who shaped it. Try it today and tell us what you think 👇
> [link]

**Post on X** (under 280 characters):

> New at {{company}}: {{product}} — {{what}}. Built with {{audience}}, available to everyone today. [link]

Post the LinkedIn version from a founder or team member's account, not just the company page; personal posts usually get several times the reach.`,
      },
      {
        user: "{{manager}} thinks the intro of our launch post is too long. Can you tighten it?",
        assistant: md`
Tighter intro (2 sentences instead of 3):

> {{audience}} spend too much of their week on work around the work. Today we're launching **{{product}}** — {{what}} — to give that time back.

What I cut: the "every week we talk to..." setup. It's true, but readers skip to the point; the "Why we built it" section already carries that message. If {{manager}} wants it even shorter, the intro can be just the second sentence.`,
      },
      {
        user: "Should we include a screenshot or a GIF?",
        assistant: md`
Yes — a short GIF or video near the top usually does more than any paragraph. Guidelines:

- **Place it right after the intro**, before "What it does".
- **5–10 seconds**, one flow only: the setup or the "aha" moment, not a full tour.
- **Realistic but fake data**: no real customer names, emails or numbers in the recording.
- **Under ~5 MB**; if it's bigger, use an MP4 with autoplay/muted/loop instead of a GIF — it's much smaller and sharper.
- **Alt text** describing what happens, e.g. "Setting up {{product}} in three clicks and seeing results update automatically".

A static screenshot works as the social preview image (1200 × 630 px).`,
      },
    ],
    points: [
      "Lead with the reader's problem, not the company's excitement",
      "Say what {{product}} is in one sentence near the top",
      "Use only real numbers and quotes you're allowed to publish",
      "Add a short GIF or video right after the intro",
      "Keep the post around 300–500 words",
      "End with a clear call to action and a way to give feedback",
    ],
  },
  {
    key: "translate-email-spanish",
    domain: "writing",
    weight: 1.5,
    subject: "writing the Spanish email",
    cases: [
      { recipient: "Sr. García", topicEn: "the delivery delay", esText: "el retraso en la entrega", esAbout: "al retraso en la entrega", firstName: "Javier" },
      { recipient: "Sra. Martínez", topicEn: "the updated quote", esText: "el presupuesto actualizado", esAbout: "al presupuesto actualizado", firstName: "Lucía" },
      { recipient: "Sr. Fernández", topicEn: "next week's meeting", esText: "la reunión de la próxima semana", esAbout: "a la reunión de la próxima semana", firstName: "Andrés" },
      { recipient: "Sra. Núñez", topicEn: "the contract renewal", esText: "la renovación del contrato", esAbout: "a la renovación del contrato", firstName: "Carmen" },
    ],
    titles: [
      "Work email in Spanish",
      "Spanish [[wording|phrasing]] for a work email",
    ],
    starts: [
      {
        titles: [
          "Translate email to Spanish[[| for {{recipient}}]]",
          "Spanish email to {{recipient}}[[| about {{topicEn}}]]",
          "Email about {{topicEn}} in Spanish",
          "Formal Spanish email to {{firstName}}",
        ],
        user: "[[Can you translate|Could you translate|Please translate]] this email to Spanish? It's for a client, {{recipient}}, so it should be [[polite|formal|polite but not stiff]]:\n\n\"Hi {{firstName}}, thanks for your patience regarding {{topicEn}}. We'll send you an update by Friday. If you have any questions in the meantime, just let me know. Best, {{name}}\"",
        assistant: md`
Here's a polite, professional version (using *usted*, which fits a client relationship):

> Estimado {{recipient}}:
>
> Muchas gracias por su paciencia con respecto {{esAbout}}. Le enviaremos una actualización antes del viernes.
>
> Si mientras tanto tiene alguna pregunta, no dude en ponerse en contacto conmigo.
>
> Un cordial saludo,
> {{name}}

Notes:
- **"Estimado/Estimada"** is the standard formal greeting; use *Estimada* for a woman (Sra.). The colon after the name is the Spanish convention, not a comma.
- If you're on first-name terms, "Hola {{firstName}}:" with *tú* forms is fine: "Muchas gracias por tu paciencia... Si tienes alguna pregunta, dímelo."
- **"Un cordial saludo"** is formal but warm; "Saludos" is more neutral, "Un abrazo" only for people you know well.

¿Quieres que lo adapte a un tono más cercano?`,
      },
      {
        titles: [
          "Apology for [[late reply|slow response]] in Spanish",
          "'Lo siento' vs 'disculpe'[[| in emails]]",
          "Formal vs informal apology [[in Spanish|en español]]",
        ],
        user: "[[How do I say|What's the natural way to say|How would you write]] \"Sorry for the late reply, I was on vacation\" in Spanish, [[for a colleague|in a work email|to my team in Madrid|to a client in Mexico]]? [[And is it \"lo siento\" or \"disculpe\"?|Not sure if \"lo siento\" fits.|]]",
        assistant: md`
A natural version for a colleague (informal, *tú*):

> Perdona la demora en responder, estuve de vacaciones.

More formal (*usted*), e.g. for a client:

> Disculpe la demora en mi respuesta; he estado de vacaciones.

About the word choice:
- **"Lo siento"** expresses regret or sympathy ("I'm sorry [this happened]"). It's fine, but for a late reply it sounds a bit heavy.
- **"Perdona / Perdone"** and **"Disculpa / Disculpe"** are "excuse me / forgive me" — the usual choice for small apologies like a late reply. The *-e* endings are the formal *usted* forms.
- In Latin America, "Disculpa la demora" is very common; in Spain, "Perdona el retraso" sounds more natural.

You can add: "Ya estoy de vuelta y me pongo con ello hoy mismo." (I'm back and will get on it today.)`,
      },
    ],
    followUps: [
      {
        user: "[[Perfect.|Great.]] How would I add a sentence to the client email saying we'll offer a 10% discount on the next order as an apology?",
        assistant: md`
Add this as a second paragraph:

> Como muestra de agradecimiento por su comprensión, nos gustaría ofrecerle un 10 % de descuento en su próximo pedido.

("As a token of appreciation for your understanding, we would like to offer you a 10% discount on your next order.")

Two small details: in Spanish a space goes between the number and the percent sign (**10 %**), per the RAE's recommendation — though "10%" without a space is widely seen in business emails too. And I framed it as *agradecimiento* (thanks) rather than *disculpa* (apology), which reads more positively; if you want an explicit apology: "Para compensar las molestias, nos gustaría ofrecerle un 10 % de descuento...".`,
      },
      {
        user: "What's a good subject line for it in Spanish?",
        assistant: md`
Options, from neutral to warmer:

1. **Actualización sobre {{esText}}**
2. **Próximos pasos sobre {{esText}}**
3. **Gracias por su paciencia — actualización**
4. **Novedades y un pequeño detalle para usted** (hints at the discount)

Spanish subject lines capitalize only the first word and proper nouns — "Actualización sobre el pedido", not "Actualización Sobre El Pedido". I'd go with #1 for a client: clear and easy to find in their inbox later.`,
      },
      {
        user: "Can you check my own Spanish? I wrote: \"Estoy muy emocionado para trabajar con ustedes en este proyecto.\"",
        assistant: md`
Almost! Two small fixes:

> **Estoy muy ilusionado de trabajar con ustedes en este proyecto.**

- **"para" → "de"**: *emocionado/ilusionado de + infinitive*. "Para" expresses purpose, which doesn't fit here.
- **"emocionado"** is correct but can sound like you're emotional or moved. In Spain **"ilusionado"** is more natural for "excited about"; in Latin America "entusiasmado" works well: "Estoy muy entusiasmado de trabajar con ustedes".

A slightly more polished business version: "Me hace mucha ilusión trabajar con ustedes en este proyecto." (Spain) or "Es un gusto poder trabajar con ustedes en este proyecto." (neutral).`,
      },
    ],
    points: [
      "Use *usted* forms and \"Estimado/Estimada\" for clients",
      "Put a colon after the greeting in Spanish emails",
      "Prefer \"Disculpe la demora\" over \"Lo siento\" for a late reply",
      "Capitalize only the first word of Spanish subject lines",
      "Close with \"Un cordial saludo\" in formal emails",
      "Check regional differences between Spain and Latin America",
    ],
  },
  {
    key: "german-business-email",
    domain: "writing",
    weight: 1,
    subject: "German business emails",
    cases: [
      { recipient: "Herr Müller", greeting: "Sehr geehrter Herr Müller", city: "München", matter: "the invoice correction", deSubject: "Rechnungskorrektur", deGen: "der Rechnungskorrektur", deDat: "bei der Rechnungskorrektur" },
      { recipient: "Frau Schäfer", greeting: "Sehr geehrte Frau Schäfer", city: "Zürich", matter: "rescheduling our workshop", deSubject: "Verschiebung unseres Workshops", deGen: "der Verschiebung unseres Workshops", deDat: "bei der Verschiebung unseres Workshops" },
      { recipient: "Herr Weiß", greeting: "Sehr geehrter Herr Weiß", city: "Köln", matter: "the delayed shipment", deSubject: "Verspätete Lieferung", deGen: "der verspäteten Lieferung", deDat: "bei der Lieferung" },
      { recipient: "Frau Jäger", greeting: "Sehr geehrte Frau Jäger", city: "Wien", matter: "the project kick-off", deSubject: "Projektstart", deGen: "des Projektstarts", deDat: "beim Projektstart" },
    ],
    titles: [
      "German business email[[| to {{recipient}}]]",
    ],
    starts: [
      {
        titles: [
          "Formal email in German to {{recipient}}",
          "German email about {{matter}}",
          "German email: {{deSubject}}",
          "Translating to German for our {{city}} partner",
        ],
        user: "I need to write a [[formal|polite]] email in German to {{recipient}} [[from our partner in {{city}}|at our supplier in {{city}}|— a client in {{city}} —]] about {{matter}}. [[My German is basic.|My German is rusty.|I don't speak German at all.]] [[Can you write it?|Could you draft it?|Can you help?]] Key message: we're sorry for the inconvenience and will confirm details by {{weekday}}.",
        assistant: md`
Here's a formal version:

> **Betreff:** {{deSubject}} – kurze Rückmeldung
>
> {{greeting}},
>
> vielen Dank für Ihre Nachricht und Ihre Geduld. Bitte entschuldigen Sie die entstandenen Unannehmlichkeiten bezüglich {{deGen}}.
>
> Wir prüfen derzeit alle Details und werden Ihnen bis spätestens {{weekday}} eine verbindliche Bestätigung zukommen lassen.
>
> Für Rückfragen stehe ich Ihnen selbstverständlich jederzeit gerne zur Verfügung.
>
> Mit freundlichen Grüßen
> {{name}}
> {{company}}

A few conventions worth knowing:
- After the greeting comes a **comma**, and the next line starts in **lowercase** ("vielen Dank...").
- **"Mit freundlichen Grüßen"** is the standard formal closing — no comma after it.
- Always **Sie** (formal "you", capitalized, along with *Ihre/Ihnen*) unless they've offered *du*.

If you tell me exactly what went wrong, I can make the apology more specific. For recipients in Switzerland, note that "ß" is written "ss" there ("Grüsse").`,
      },
      {
        titles: [
          "Sie vs du in business [[German|emails]]",
          "Du or Sie with a [[business partner|client]]?",
          "When to switch from Sie to du[[| in {{city}}]]",
        ],
        user: "Is it okay to use \"du\" with a [[German|Swiss|Austrian]] [[business partner|client|supplier]] if they signed their last email with just their first name[[?| ({{name}} at {{company}})?]][[ Don't want to be rude.| I never know.|]]",
        assistant: md`
Be careful — a first-name signature alone isn't an invitation to *du* in German business culture. Signals that it's fine:

- They **explicitly** offered it ("Wir können uns gerne duzen").
- They **write** to you using *du*.
- The company culture is clearly informal (many startups, tech and creative agencies use *du* by default, often stated in their emails or website).

If unsure, stay with *Sie* and use their first name only if they did: "Hallo Jan, vielen Dank für Ihre Nachricht..." — the mixed form "first name + Sie" is increasingly common and perfectly polite.

Switching from *du* back to *Sie* is awkward, so it's better to wait for them to offer. In Austria and Switzerland, business culture is similar, and *Sie* is, if anything, a bit more expected with older or senior contacts.`,
      },
    ],
    followUps: [
      {
        user: "Now I need to email {{recipient}} about {{matter}}. We've worked together for a year, so [[a bit less stiff please|not too formal]] — but still Sie. Can you draft it?",
        assistant: md`
Still *Sie*, but warmer:

> Hallo {{recipient}},
>
> danke für Ihre Nachricht – und für Ihre Geduld! Es tut mir leid, dass es {{deDat}} Schwierigkeiten gab.
>
> Wir schauen uns gerade alles genau an, und ich melde mich bis {{weekday}} mit einer Bestätigung bei Ihnen.
>
> Viele Grüße aus unserem Team
> {{name}}

Changes: "Hallo" instead of "Sehr geehrte/r", "Es tut mir leid" (personal) instead of the more formal "Bitte entschuldigen Sie", and **"Viele Grüße"** as the closing, which is friendly but still professional. "Beste Grüße" is a common alternative.`,
      },
      {
        user: "How do I write the umlauts if my keyboard doesn't have them?",
        assistant: md`
Options:

- **Replacement spelling**: ä → ae, ö → oe, ü → ue, ß → ss ("Gruesse", "Mueller"). Readable and accepted, but looks a bit unpolished in formal emails — and in names it's best to match how the person writes their own name.
- **Windows**: add the German keyboard layout (Win + Space to switch), or Alt codes: Alt+0228 = ä, Alt+0246 = ö, Alt+0252 = ü, Alt+0223 = ß.
- **macOS**: hold the vowel key and pick the umlaut (or Option+U, then the vowel). ß is Option+S.
- **Linux**: set a Compose key; Compose + " + a = ä.
- **Phone**: long-press the letter.

For a few emails, holding the key (Mac/phone) is easiest; if you write German regularly, switching layouts pays off quickly.`,
      },
    ],
    points: [
      "Use \"Sehr geehrte/r\" for formal greetings, followed by a comma",
      "Start the first sentence after the greeting in lowercase",
      "Close with \"Mit freundlichen Grüßen\" without a comma",
      "Stay with *Sie* until the other person offers *du*",
      "Capitalize Sie, Ihnen and Ihre when addressing someone formally",
      "Write \"ss\" instead of \"ß\" for Swiss recipients",
    ],
  },
  {
    key: "meeting-notes-summary",
    domain: "writing",
    weight: 2,
    subject: "the meeting summary",
    cases: [
      { meeting: "Q3 roadmap review", decision: "postpone the mobile redesign to Q4", owner: "Priya", deadline: "July 15" },
      { meeting: "incident retro for the June 4 outage", decision: "add a canary stage to the deploy pipeline", owner: "Jonas", deadline: "next sprint" },
      { meeting: "weekly sales sync", decision: "focus outbound on mid-market logistics companies", owner: "Marco", deadline: "end of the month" },
      { meeting: "hiring committee", decision: "open a second senior backend role", owner: "Aisha", deadline: "October 1" },
      { meeting: "pricing workshop", decision: "test a usage-based tier with 20 customers", owner: "Chloé", deadline: "November 30" },
    ],
    titles: [
      "Summary of [[the |]]{{meeting}}",
      "Action items from [[the |]]{{meeting}}",
    ],
    starts: [
      {
        titles: [
          "Meeting notes cleanup[[| for {{meeting}}]]",
          "Turning messy notes into a [[recap|summary]]",
          "Recap: {{meeting}}",
        ],
        user: md`
[[Can you turn my messy notes from the {{meeting}} into a clean summary with decisions and action items?|Could you turn my messy notes from the {{meeting}} into a clean summary with decisions and action items?|Please turn my messy notes from the {{meeting}} into a clean summary with decisions and action items.]][[ Need to send it by end of day.| Sorry for the chaos.|]]

"ok so — long discussion about scope, {{manager}} worried about capacity. agreed to {{decision}}. {{owner}} takes it, needs to be done by {{deadline}}. budget q: still open, finance to confirm by next week?? also: docs are outdated, someone should fix (Tomás maybe). next meeting in 2 wks. oh and metrics dashboard broken since tuesday"`,
        assistant: md`
**{{meeting}} — summary**

**Decisions**
- We will **{{decision}}**. Main concern raised by {{manager}}: team capacity.

**Action items**
| Owner | Action | Due |
|---|---|---|
| {{owner}} | Drive the decision above: {{decision}} | {{deadline}} |
| Finance (contact TBD) | Confirm budget | Next week |
| Tomás (to confirm) | Update outdated documentation | TBD |
| TBD | Fix the metrics dashboard (broken since Tuesday) | ASAP |

**Open questions**
- Budget is not yet confirmed — depends on finance.
- Who owns the dashboard fix?

**Next meeting:** in two weeks.

---

I marked uncertain items as "TBD" / "to confirm" rather than guessing — worth clarifying these before sending, especially the dashboard owner, since unowned action items tend not to happen.`,
      },
      {
        titles: [
          "Summary format for a meeting transcript",
          "Meeting summary template[[| for {{meeting}}]]",
          "Summarizing the {{meeting}} [[transcript|recording]]",
        ],
        user: "I have a [[45-minute|one-hour|30-minute]] transcript from our {{meeting}}. What's a good format for the summary that people will actually read?[[ Last time nobody read my notes.|]]",
        assistant: md`
People read the first five lines, so put decisions and actions there. A format that works:

\`\`\`
Subject: [Summary] {{meeting}} – decisions & next steps

TL;DR: <one sentence: the main decision and what happens next>

Decisions
- <decision>, because <one-line reason>

Action items
- <Owner>: <action> — due <date>

Open questions
- <question> (who will answer it, by when)

Context / discussion (optional, for people who missed it)
- 3–5 bullets max
\`\`\`

Tips:
- **One owner per action**, a real name — not "the team".
- **Dates, not "soon"**.
- Keep the discussion section short; link the full transcript or recording for anyone who needs detail.
- Send within 24 hours while people remember the meeting.

Paste the transcript (or the relevant part) and I'll fill this in — I'll mark anything ambiguous instead of guessing.`,
      },
    ],
    followUps: [
      {
        user: "Here's the gist: we agreed to {{decision}} ({{owner}}, by {{deadline}}); budget is waiting on finance; docs are outdated (Tomás maybe); the metrics dashboard is broken and has no owner. Can you turn that into a short email for the people who weren't there?",
        assistant: md`
> **Subject:** {{meeting}} – summary and next steps
>
> Hi all,
>
> Quick recap for those who couldn't join:
>
> **Decision:** we'll {{decision}}. {{owner}} is driving this, target date {{deadline}}.
>
> **Still open:** budget confirmation from finance (expected next week), and an owner for fixing the metrics dashboard — if you can take that, reply here.
>
> **Also:** the documentation is outdated; Tomás may pick it up (to be confirmed).
>
> Next meeting is in two weeks. Questions or concerns → reply to this email or ping {{owner}} directly.
>
> Thanks,
> {{name}}

I put the decision first and the request for help (dashboard owner) in the middle where it's visible.`,
      },
      {
        user: "{{manager}} says it should also mention the risks. What would you add?",
        assistant: md`
Add a short **Risks** section right after the decision, with an owner for each mitigation:

**Risks**
- **Capacity**: {{decision}} competes with ongoing work; if another priority comes up, {{deadline}} slips. *Mitigation:* {{owner}} confirms scope and staffing with {{manager}} this week.
- **Budget uncertainty**: until finance confirms, we can't commit external spend. *Mitigation:* plan a version that needs no extra budget.
- **Visibility**: the metrics dashboard is broken, so we can't track impact right now. *Mitigation:* fix it before work starts.

Three risks is plenty for a summary — the goal is to make the trade-offs visible, not to list everything that could go wrong.`,
      },
    ],
    points: [
      "Put decisions and action items at the top",
      "Give every action item exactly one named owner",
      "Use dates instead of \"soon\" or \"ASAP\"",
      "Mark unclear points as TBD instead of guessing",
      "List open questions with who will answer them",
      "Send the summary within 24 hours",
    ],
  },
  {
    key: "performance-self-review",
    domain: "writing",
    weight: 1,
    subject: "the self-review",
    vars: {
      role: ["backend engineer", "product manager", "designer", "data scientist", "customer success manager", "QA engineer"],
      project: ["the billing migration", "the new onboarding flow", "the search relevance work", "our SOC 2 audit", "the mobile app launch"],
      metric: ["reduced support tickets by 25%", "shipped two weeks ahead of plan", "cut cloud costs by $8k a month", "raised NPS from 32 to 41"],
    },
    titles: [
      "Writing my [[performance|annual]] self-review[[| as a {{role}}]]",
      "Self-assessment for {{role}} [[review|performance review]]",
      "Self-review: [[{{project}}|impact of {{project}}]]",
      "How to describe impact in a [[review|self-review]]",
      "Annual review as a {{role}}[[| — {{project}}]]",
      "Self-review for {{project}} work",
    ],
    starts: [
      {
        user: "I have to write my annual self-review as a {{role}}. My main project was {{project}} and we {{metric}}. I always undersell myself. How should I structure it?",
        assistant: md`
A structure that makes your impact easy to see:

**1. Summary (3–4 sentences)**
The year in one paragraph: your main contribution and its result.
> "This year I led {{project}}, which {{metric}}. I also [second contribution] and helped [people/team] with [thing]."

**2. Key achievements (3–5), each as impact → action → evidence**
> "**{{metric}}** by leading {{project}}. I [what you specifically did — decisions, trade-offs, coordination]. Evidence: [dashboard, launch doc, feedback]."

**3. How you worked** — collaboration, mentoring, process improvements. Name people you helped and how.

**4. What didn't go well and what you learned** — one or two honest points. This builds credibility.

**5. Goals for next year** — 2–3, connected to the team's direction.

Anti-underselling rules: say "I" for what you did (not "we" for everything), put numbers first, and don't qualify ("I just helped a bit with..."). Reviewers can only credit what they read.`,
      },
    ],
    followUps: [
      {
        user: "Here's my draft for the first achievement: \"We worked on {{project}} and it went pretty well, I helped with a lot of the work.\" How can I improve it?",
        assistant: md`
The information is hidden behind "we", "pretty well" and "helped". Rewritten:

> **Led {{project}}, which {{metric}}.** I defined the rollout plan, made the call to [key decision], and coordinated [number] people across [teams]. When [problem] came up mid-way, I [what you did], which kept us on schedule.

Fill in the brackets with specifics — the key decision and the problem you solved are what distinguish your contribution from just being on the project. If you didn't *lead* it, pick an honest strong verb: *designed*, *built*, *drove*, *owned*, *unblocked*.`,
      },
      {
        user: "What should I write in the \"areas for improvement\" section without hurting myself?",
        assistant: md`
Pick something real, show you've noticed it, and show what you're doing about it. For example:

> "I took on too much of {{project}}'s coordination myself, which made me a bottleneck in the final weeks. Next year I want to delegate earlier: I've started writing clearer task briefs so others can own parts end-to-end."

Good choices are things that grow with seniority: delegation, influencing without authority, writing, prioritization, saying no. Avoid fake weaknesses ("I work too hard") and avoid anything that contradicts your core responsibilities as a {{role}}. One or two points are enough.`,
      },
    ],
    points: [
      "Lead every achievement with its measurable impact",
      "Say \"I\" for your own contributions",
      "Describe the decisions you made and the problems you solved",
      "Include one honest area for improvement with a concrete plan",
      "Connect next year's goals to the team's direction",
      "Link evidence such as dashboards, docs and feedback",
    ],
  },

  // ------------------------------------------------------------------ business
  {
    key: "pricing-strategy",
    domain: "business",
    weight: 1.5,
    subject: "the pricing change",
    cases: [
      { product: "project management SaaS", current: "$12 per user/month", segment: "teams of 10–50", arpa: "$310" },
      { product: "API monitoring tool", current: "$49/month flat", segment: "startups and small dev teams", arpa: "$49" },
      { product: "B2B invoicing platform", current: "€29/month per company", segment: "freelancers and agencies", arpa: "€34" },
      { product: "customer support chatbot", current: "$0.40 per resolved conversation", segment: "e-commerce shops", arpa: "$820" },
    ],
    vars: { churn: ["2.1%", "3.5%", "4.8%", "1.4%"], competitor: ["Asana", "Datadog", "Chargebee", "Intercom", "Zendesk"] },
    titles: [
      "Pricing strategy for [[our|a]] {{product}}",
    ],
    starts: [
      {
        titles: [
          "Should we raise prices[[?| on our {{product}}?]]",
          "[[Underpriced|Are we underpriced]] vs {{competitor}}?",
          "Price increase plan for {{segment}}",
          "Designing pricing tiers[[| for {{segment}}]]",
        ],
        user: "We sell our {{product}} at {{current}}, mostly to {{segment}}. Average revenue per account is {{arpa}}/month, monthly churn {{churn}}. [[We think we're underpriced compared to {{competitor}}.|{{competitor}} charges roughly twice as much.|Sales keeps telling us we're too cheap.]] [[How should we approach a price increase?|How do we raise prices without losing customers?|Where do we start?]]",
        assistant: md`
Treat it as an experiment with a clear hypothesis rather than a one-off decision. A sensible sequence:

**1. Find out what customers value.** Talk to 10–15 customers and run a short Van Westendorp survey ("At what price would this be too expensive / a bargain?"). Look at which features correlate with retention and expansion — those are your value metric candidates.

**2. Check the value metric, not just the price.** {{current}} may be the wrong *unit*. If your best customers get 10x more value than small ones but pay about the same, tiers or a usage component capture that better than a flat increase.

**3. Design tiers around segments**, e.g.:
| Tier | For | Price idea |
|---|---|---|
| Starter | small teams, self-serve | current price |
| Pro | {{segment}} needing integrations and reporting | +30–50% |
| Business | SSO, audit log, SLA | sales-led, 2–3x |

**4. Roll out to new customers first.** Compare conversion and early churn against the old price for 4–8 weeks.

**5. Migrate existing customers** with notice (60–90 days), a clear explanation, and optionally a grandfathering period.

With {{churn}} monthly churn, watch churn by cohort closely after the change: a price increase that raises ARPA 20% but doubles churn is a loss within a year.`,
      },
      {
        titles: [
          "Usage-based vs [[per-seat|flat]] pricing",
          "Usage-based pricing for {{product}}?",
          "Hybrid pricing for our {{product}}",
        ],
        user: "Should we switch our {{product}} from {{current}} to usage-based pricing? [[Our investors keep mentioning it.|{{manager}} is pushing for it.|Everyone seems to be doing it.]]",
        assistant: md`
Usage-based pricing works well when **usage tracks the value customers get** and customers can predict their bill. It works poorly when usage is spiky or when customers fear surprise invoices.

Questions to answer first:
1. **What's the value metric?** Something customers understand and that grows with their success (API calls, resolved tickets, invoices sent) — not something they feel punished for.
2. **Predictability**: can a customer estimate next month's bill? If not, add committed-use plans, spending caps or alerts.
3. **Revenue impact**: model your current customers under the new scheme. Typically some pay a lot more, some a lot less. Who are they, and would they stay?
4. **Sales and finance**: usage-based revenue is harder to forecast and needs metering, billing and invoicing infrastructure.

A common middle ground is **hybrid**: a platform fee (e.g. the current {{current}}) that includes a usage allowance, plus overage pricing. It keeps a predictable base while capturing expansion from heavy users. I'd model the hybrid option against your current book before deciding.`,
      },
    ],
    followUps: [
      {
        user: "How should we communicate the price increase to existing customers?",
        assistant: md`
Principles: early, honest, specific, and with a way to keep the old price a bit longer.

Email outline:
1. **What changes and when**: new price, effective date (60–90 days out).
2. **Why**: what you've added over the past year (name 3–4 real improvements) and what's coming.
3. **What it means for them**: their specific new price, not a link to a pricing page.
4. **Options**: lock in the current price with an annual plan before the deadline, or move to a different tier.
5. **A person to contact**.

Also: brief the support team before sending, with an FAQ and a small discretionary discount budget for at-risk accounts. Expect a spike in tickets in the first week — and some churn, usually concentrated in accounts that were already low-engagement.`,
      },
      {
        user: "Can you model what happens to revenue if we raise the price 25% and churn goes up to [[5%|4%|6%]] for three months?",
        assistant: md`
A simple model, assuming 1,000 accounts at {{arpa}} ARPA and monthly churn of {{churn}} today:

\`\`\`python
def project(accounts, arpa, monthly_churn, months=12, new_per_month=40):
    mrr = []
    for m in range(months):
        accounts = accounts * (1 - monthly_churn[m]) + new_per_month
        mrr.append(accounts * arpa)
    return mrr

base = project(1000, 310, [0.021] * 12)
increase = project(1000, 310 * 1.25, [0.05] * 3 + [0.021] * 9)
print(round(sum(increase) - sum(base)))
\`\`\`

(Replace 310 and 0.021 with your real ARPA and churn.) In most scenarios like this, the higher price wins within a few months *if* churn returns to the old baseline afterwards — the key uncertainty is whether it does. Also model that new-customer conversion may drop at the higher price; run it with 10–20% lower \`new_per_month\` as a pessimistic case.`,
      },
      {
        user: "Should we show prices on the website or go 'contact sales'?",
        assistant: md`
For {{segment}}, show prices. Self-serve buyers expect to see them, and hiding them mainly filters out people who would have bought without a call. "Contact sales" makes sense for the top tier only — custom contracts, security reviews, volume discounts.

Good pricing pages:
- 3 tiers, with the recommended one highlighted.
- Monthly and annual prices (annual discount of 15–20% is common).
- A clear feature comparison table and a short FAQ ("What happens if I exceed my limit?").
- Positioning against {{competitor}} is tempting, but keep it off the pricing page; a comparison page is a better place.`,
      },
    ],
    points: [
      "Find the value metric that grows with customer success",
      "Test new prices on new customers before migrating existing ones",
      "Give existing customers 60–90 days' notice",
      "Model revenue with pessimistic churn and conversion scenarios",
      "Consider a hybrid of platform fee plus usage",
      "Watch churn by cohort after the change",
    ],
  },
  {
    key: "okr-drafting",
    domain: "business",
    weight: 1.5,
    subject: "the OKRs",
    vars: {
      quarter: ["Q1", "Q2", "Q3", "Q4"],
      teamName: ["platform team", "customer support team", "growth team", "design team", "data team", "sales team"],
      goal: ["improve reliability", "reduce onboarding time", "grow self-serve revenue", "improve customer satisfaction", "speed up releases"],
    },
    titles: [
      "OKR [[help|review]] for {{quarter}}",
    ],
    starts: [
      {
        titles: [
          "OKRs for {{teamName}} {{quarter}}",
          "OKR[[ draft|]]: {{goal}}",
          "{{quarter}} OKR draft for {{teamName}}",
          "Writing measurable key results[[| for {{teamName}}]]",
        ],
        user: "Help me draft {{quarter}} OKRs for our {{teamName}}. The main goal is to {{goal}}. Our current draft KR is just \"[[{{goal}}|try to {{goal}}]]\".",
        assistant: md`
A KR like "{{goal}}" is an intention, not a key result — a KR should describe a **measurable outcome**, so you can tell at the end of {{quarter}} whether you got there. Here's a draft:

**Objective:** [[Customers can rely on us without thinking about it|Make {{goal}} something customers notice]]

**Key results**
1. Increase [primary metric] from **X to Y** by the end of {{quarter}}.
2. Reduce [pain metric, e.g. incidents, time to value, tickets] from **A to B**.
3. [Leading indicator], e.g. "80% of [relevant activity] covered by [practice]" — something that moves within weeks, not months.

To make these concrete I need the baselines. For example, if the goal is reliability:
- Uptime of the core API from 99.5% to 99.9%
- Customer-facing incidents from 6 to ≤ 2 per quarter
- 100% of services with alerting on SLOs

Rules of thumb: 2–4 KRs per objective, each with a baseline and a target, written so that 70% achievement feels like a good quarter. Initiatives ("migrate to new monitoring") go in a separate list under the KRs they support.`,
      },
      {
        titles: [
          "Too many [[OKRs|objectives]] in {{quarter}}",
          "Focusing company OKRs for {{quarter}}",
          "Cutting down {{quarter}} objectives",
        ],
        user: "Our company has [[12|15|9]] objectives and [[40+|50+|over 60]] key results for {{quarter}}. [[It feels like nobody knows what matters.|Teams are confused about priorities.|Nobody can name our top priorities.]] [[How do we fix that?|What would you change?|How do we focus?]]",
        assistant: md`
That's the most common OKR failure: OKRs become a list of everything everyone does. Focus is the point. Suggestions:

1. **3 company objectives, max.** If everything is a priority, nothing is. Ask the leadership team: "If we achieve only three things this quarter, which three?"
2. **2–4 KRs each**, measurable, with baselines.
3. **Teams align, not cascade**: each team picks the 1–2 company objectives it can move most and writes its own KRs for them. Not every team needs to contribute to every objective.
4. **Business-as-usual work is not an OKR.** Keeping the lights on is expected; OKRs are for change.
5. **Review weekly** in 15 minutes: confidence score per KR (e.g. 1–10), and what's blocking.

Then check the result: can every person in the company name the top 3 objectives? If not, there are still too many.`,
      },
    ],
    followUps: [
      {
        user: "What's the difference between a key result and an initiative? My team keeps mixing them up.",
        assistant: md`
- **Key result** = a measurable *outcome*: "Onboarding time drops from 14 days to 5."
- **Initiative** = something you *do* that you believe will move it: "Build a setup wizard", "Record onboarding videos".

Test: *could you complete it and still fail the objective?* If yes, it's an initiative. You can ship a wizard and onboarding time stays at 14 days — then the wizard wasn't the right bet, and the KR tells you so.

A simple format that helps teams keep them apart:

| KR | Baseline → Target | Initiatives |
|---|---|---|
| Median onboarding time | 14 → 5 days | setup wizard, templates, kickoff call |

For the {{teamName}}, write the KR first, then brainstorm initiatives — not the other way round.`,
      },
      {
        user: "How should we score OKRs at the end of the quarter?",
        assistant: md`
Keep it simple and honest:

- Score each KR **0.0–1.0** based on progress from baseline to target (14 → 5 days, reached 8 → about 0.67).
- 0.6–0.7 is a good result for ambitious OKRs; consistently hitting 1.0 means the targets were too safe.
- **Don't tie OKR scores to compensation.** People will sandbag targets immediately.

The retrospective matters more than the score: for each KR, what worked, what didn't, and what you'd do differently. Carry forward what still matters, drop what doesn't — don't copy KRs into next quarter by default.`,
      },
    ],
    points: [
      "Write key results as measurable outcomes with a baseline and target",
      "Keep 2–4 key results per objective",
      "Limit the company to about three objectives",
      "Separate initiatives from key results",
      "Review confidence weekly in 15 minutes",
      "Don't tie OKR scores to compensation",
    ],
  },
  {
    key: "churn-analysis",
    domain: "business",
    weight: 1.5,
    subject: "the churn analysis",
    vars: {
      churnRate: ["3.2%", "4.5%", "6.1%", "2.4%"],
      product: ["mobile app subscription", "B2B analytics tool", "meal kit subscription", "online course platform", "CRM for small businesses"],
      segmentA: ["monthly plans", "accounts on the Starter tier", "users who signed up via paid ads", "customers in their first 90 days"],
    },
    titles: [
      "[[Customer churn|Churn]] analysis for {{product}}",
    ],
    starts: [
      {
        titles: [
          "Why is churn {{churnRate}}?",
          "Cohort retention analysis[[| for {{product}}]]",
          "Churn [[spike|increase]] to {{churnRate}}",
        ],
        user: "Monthly churn for our {{product}} [[went up|jumped|crept up]] [[to {{churnRate}}|to {{churnRate}} from about 2%|to {{churnRate}} over the last quarter]]. [[Leadership wants to know why by next week.|{{manager}} wants an explanation by {{weekday}}.|The board is asking about it.]] [[Where do I start?|How should I approach the analysis?|What should I look at first?]]",
        assistant: md`
Start by locating the churn before explaining it — "churn went up" almost always turns out to be concentrated in a few places.

**1. Cohort retention table** (rows = signup month, columns = months since signup). It shows whether new cohorts retain worse (an acquisition or onboarding problem) or all cohorts got worse at the same time (a product, price or competitor event).

\`\`\`sql
SELECT date_trunc('month', a.signup_at) AS cohort,
       (extract(year FROM age(m.activity_month, date_trunc('month', a.signup_at))) * 12
        + extract(month FROM age(m.activity_month, date_trunc('month', a.signup_at)))) AS month_n,
       count(DISTINCT m.account_id) AS active
FROM monthly_activity m
JOIN accounts a USING (account_id)
GROUP BY 1, 2
ORDER BY 1, 2;
\`\`\`

**2. Break it down**: plan, acquisition channel, company size/country, tenure. Look especially at {{segmentA}}.

**3. Distinguish voluntary vs involuntary churn.** Failed payments are often 20–40% of churn in subscriptions and are fixable with dunning emails and card updaters.

**4. Check the timeline** for events: price changes, releases, outages, a competitor launch.

**5. Talk to churned customers** — 8–10 short calls, or read the cancellation survey answers.

For next week, a good deliverable is: "Churn rose from X to {{churnRate}}; 70% of the increase comes from [segment], mostly [reason]; here's what we'll do." Be explicit about what's confirmed and what's a hypothesis.`,
      },
      {
        titles: [
          "Predicting churn from [[usage|product usage|activity]] data",
          "Churn prediction model for {{product}}",
          "Churn risk scores for [[customer success|the CS team]]",
        ],
        user: "We have usage data ([[logins, features used, seats|logins, feature events and support tickets|daily activity and billing history]]) for our {{product}}. Can we predict which accounts will churn [[next month|in the next 30 days|before renewal]]?[[ Customer success wants a risk list.| We have about [[2 years|18 months]] of history.|]]",
        assistant: md`
Yes, and a simple model often gets you most of the value. Approach:

**Features** (computed per account as of a snapshot date):
- Activity trend: logins / key actions in the last 14 days vs the previous 14 (declines matter more than absolute levels).
- Breadth: number of features used, % of seats active.
- Friction: support tickets, failed payments, errors.
- Contract: plan, tenure, days until renewal.

**Label**: churned within the 30 days after the snapshot.

**Model**: start with logistic regression or gradient boosting (LightGBM). Validate on a **later time period** than you trained on, not a random split — otherwise you leak the future.

\`\`\`python
from sklearn.metrics import roc_auc_score, precision_score
model.fit(X_train, y_train)            # e.g. snapshots Jan–Jun
probs = model.predict_proba(X_test)[:, 1]  # snapshots Jul–Aug
print(roc_auc_score(y_test, probs))
\`\`\`

What matters operationally: precision in the top 10% of risk scores, because that's the list customer success will actually work through. And a model only helps if there's a playbook for flagged accounts — decide that before building it.`,
      },
    ],
    followUps: [
      {
        user: "The cohort table shows the drop is mostly {{segmentA}} in the first two months. What could we do about it?",
        assistant: md`
Early churn concentrated in one segment usually points to **onboarding and expectations**, not the core product. Ideas ranked by effort:

1. **Look at activation**: what do retained customers do in week 1 that churned ones don't? (E.g. "invited a teammate", "connected an integration".) Make that the onboarding goal.
2. **Onboarding nudges**: an email sequence and in-app checklist built around that activation event.
3. **Expectation fit**: for {{segmentA}}, check whether marketing promises match what the product does in the first week.
4. **Plan design**: if monthly plans churn much more, offer annual with a real discount, or a short paid trial.
5. **Human touch** for higher-value accounts: a 20-minute kickoff call in the first week.

Measure with cohort retention at 30 and 60 days for the next two cohorts.`,
      },
      {
        user: "What questions should I ask in churn interviews?",
        assistant: md`
Aim for stories, not ratings. 20 minutes, open questions, no selling:

1. "Take me back to when you signed up — what were you hoping to get done?"
2. "What did you use it for in practice? What did a typical week look like?"
3. "When did you first think about cancelling? What happened around then?"
4. "What are you using instead now (including spreadsheets or nothing)?"
5. "What would have had to be different for you to stay?"
6. "Is there anything we could have done at that moment?"

Tips: record and take notes with permission, offer a small thank-you (gift card), and interview recent churners (within 2–4 weeks). After 8–10 interviews, cluster the reasons — the stated reason ("too expensive") often hides the real one ("we never got the team to adopt it").`,
      },
    ],
    points: [
      "Build a cohort retention table to see where churn comes from",
      "Separate voluntary from involuntary (payment failure) churn",
      "Segment by plan, channel, tenure and company size",
      "Compare what retained and churned customers do in week one",
      "Validate churn models on a later time period, not a random split",
      "Interview 8–10 recent churners and look for stories, not ratings",
    ],
  },
  {
    key: "contract-clause-review",
    domain: "business",
    weight: 1.5,
    subject: "the contract review",
    cases: [
      { clause: "limitation of liability", detail: "liability capped at fees paid in the last 3 months", party: "a SaaS vendor" },
      { clause: "auto-renewal", detail: "automatic renewal for 24 months unless cancelled 90 days before the end of term", party: "our CRM provider" },
      { clause: "indemnification", detail: "we indemnify the customer for any claims arising from use of the software, without limit", party: "an enterprise customer" },
      { clause: "termination for convenience", detail: "the client may terminate at any time with 7 days' notice", party: "a consulting client" },
      { clause: "data processing", detail: "the vendor may use customer data to improve its services", party: "an analytics vendor" },
    ],
    titles: [
      "Review [[{{clause}}|a {{clause}}]] clause[[| from {{party}}]]",
      "Contract clause: {{clause}}",
      "Is this {{clause}} clause standard?",
      "Negotiating a contract with {{party}}",
      "Redline for {{clause}} clause[[| with {{party}}]]",
      "Contract review checklist[[| for {{party}}]]",
    ],
    starts: [
      {
        user: "[[We're about to sign|We're negotiating|I'm reviewing]] a contract with {{party}}[[ for next year| before our renewal| this week|]]. The {{clause}} clause says: \"{{detail}}\". [[Is that normal?|Is that standard?|Is this reasonable?]] [[What should I push back on?|What would you change?|Anything I should negotiate?]]",
        assistant: md`
I can give you a general read, but I'm not a lawyer and this isn't legal advice — for a contract that matters, have counsel review it before signing, especially since enforceability depends on the governing law.

On the clause itself ({{clause}}: "{{detail}}"):

**What to check**
- **Is it mutual?** One-sided clauses are a common negotiation point; asking for reciprocity is a reasonable, low-friction request.
- **Scope and caps**: does it have a reasonable limit? Typical market positions for SaaS are liability caps of 12 months' fees, with carve-outs (e.g. confidentiality breaches, data protection, gross negligence) that are uncapped or have a higher cap.
- **Notice periods and deadlines**: put them in your calendar if you sign — auto-renewal and termination windows are easy to miss.
- **Interaction with other clauses**: e.g. how it relates to the SLA, data processing agreement, and termination rights.

**Typical asks**
1. Make it mutual.
2. Align caps or periods with market norms (12 months of fees; 30–60 days' notice).
3. Add carve-outs that protect you where the risk is highest.

If you paste the full clause and tell me which side you're on and the governing law, I can suggest redline wording to discuss with your lawyer.`,
      },
    ],
    followUps: [
      {
        user: "Can you suggest a redline for it?",
        assistant: md`
Here's a starting point for discussion — please have your lawyer check it against the rest of the contract and the governing law:

> **Original:** "{{detail}}"
>
> **Proposed:** "Each party's aggregate liability arising out of or related to this Agreement shall not exceed the total fees paid or payable by Customer in the twelve (12) months preceding the event giving rise to the claim. This limitation shall not apply to (a) a party's breach of its confidentiality or data protection obligations, (b) a party's indemnification obligations, or (c) gross negligence or wilful misconduct."

Adapt it to the clause type — for auto-renewal, the equivalent ask is "renews for successive 12-month terms unless either party gives 30 days' written notice", plus a reminder obligation for the vendor. When sending redlines, add a one-line rationale per change ("aligning with market standard"): it speeds up negotiation considerably.`,
      },
      {
        user: "What other clauses should I look at carefully in a contract like this?",
        assistant: md`
For a typical B2B agreement with {{party}}, the clauses that cause the most trouble later:

1. **Term, renewal and termination** — notice periods, termination for convenience, what happens to your data at the end (export format, deletion timeline).
2. **Limitation of liability and indemnities** — caps, carve-outs, whether they're mutual.
3. **Payment terms** — price increases on renewal (ask for a cap, e.g. 5% or CPI), late fees, invoicing.
4. **SLA** — uptime commitment, how it's measured, and whether credits are the *only* remedy.
5. **Data protection** — a DPA if personal data is involved (GDPR), sub-processors, data location, security commitments.
6. **IP and usage rights** — who owns what you create, whether they may use your data for training or "service improvement".
7. **Governing law and jurisdiction** — where disputes are resolved.

Again: this is a checklist, not legal advice — use it to prepare questions for your lawyer.`,
      },
    ],
    points: [
      "Have a qualified lawyer review important contracts before signing",
      "Ask for one-sided clauses to be made mutual",
      "Compare liability caps with the market norm of 12 months' fees",
      "Put renewal and termination deadlines in the calendar",
      "Check what happens to your data when the contract ends",
      "Add a short rationale to every redline",
    ],
  },
  {
    key: "interview-questions",
    domain: "business",
    weight: 1,
    subject: "the interview plan",
    vars: {
      position: ["senior frontend engineer", "customer success manager", "product designer", "data engineer", "first sales hire", "senior engineering manager"],
      rounds: ["three", "four", "two"],
    },
    titles: [
      "Interview questions for [[a |]]{{position}}",
      "Structured interview plan[[| for {{position}}]]",
      "[[Scorecard|Hiring rubric]] for a {{position}}",
      "Interview process with {{rounds}} rounds",
      "First time interviewing a {{position}}",
    ],
    starts: [
      {
        user: "We're hiring a {{position}} and I'm [[running the interviews for the first time|on the interview panel for the first time|leading the hiring process]]. [[Can you suggest questions and a structure?|What should I ask, and how do I structure it?|How do I make the interviews fair and useful?]] We have {{rounds}} rounds[[ and about [[6|10|15]] candidates| over two weeks|]].",
        assistant: md`
Start from a **scorecard**, then design questions for it — that's what makes interviews comparable between candidates.

**1. Scorecard (4–5 competencies)** for a {{position}}, e.g.:
- Core craft (the actual job skills)
- Problem solving / judgment
- Communication and collaboration
- Ownership
- Role-specific: e.g. mentoring for senior roles, resilience for sales

**2. Assign competencies to rounds** so each is assessed at least once, ideally twice:
- Round 1: background + motivation (30 min)
- Round 2: craft exercise (work sample)
- Round 3: collaboration/ownership (behavioural)

**3. Behavioural questions** (ask for real examples, then probe):
- "Tell me about a project that didn't go as planned. What did you do?"
- "Describe a disagreement with a colleague about an important decision. How was it resolved?"
- "What's something you improved without being asked?"
Follow-ups: "What exactly did *you* do?", "What would you do differently?"

**4. Score independently** on a 1–4 scale per competency with written evidence, *before* the debrief, so the first opinion in the room doesn't anchor everyone.

Ask every candidate the same core questions — it's fairer and makes comparisons meaningful.`,
      },
    ],
    followUps: [
      {
        user: "Take-home assignment or live exercise?",
        assistant: md`
Both can work; what matters is that it resembles the real job and respects the candidate's time.

- **Take-home**: closer to real work, less pressure. Downsides: unpaid time (cap it at 2–3 hours, or pay for longer ones), harder to verify who did it, and candidates with caregiving duties are disadvantaged. Always follow it with a conversation about their choices.
- **Live exercise**: shows how someone thinks and communicates, no homework. Downside: pressure — make it collaborative (pairing, talking through trade-offs) rather than a performance.

For a {{position}}, a common good setup: a short, scoped exercise based on a simplified real problem from your team, done live with an interviewer as a collaborator, plus a discussion of how they'd extend it. Whatever you choose, tell candidates in advance what to expect.`,
      },
      {
        user: "What questions should I avoid?",
        assistant: md`
Avoid anything about protected characteristics — it's illegal in many countries and irrelevant to the job:
- Age, family plans, pregnancy, marital status ("Do you have kids?")
- Religion, ethnicity, nationality ("Where are you originally from?"), health or disability
- Sexual orientation, political views

Also avoid questions that predict little:
- Brain teasers ("How many golf balls fit in a plane?")
- Hypotheticals without context ("What's your greatest weakness?")
- Trivia that can be looked up in seconds

If you need to know something legitimate (e.g. "Are you authorized to work in the country?", "Can you travel 20% of the time?"), ask it the same way to every candidate. When in doubt, check with HR.`,
      },
    ],
    points: [
      "Define a scorecard of 4–5 competencies before writing questions",
      "Ask every candidate the same core questions",
      "Ask for real examples and probe what the candidate did personally",
      "Score independently before the debrief",
      "Keep take-home exercises under 2–3 hours",
      "Never ask about protected characteristics",
    ],
  },

  // ------------------------------------------------------------------ personal
  {
    key: "lisbon-trip",
    domain: "personal",
    weight: 1.5,
    subject: "the Lisbon trip",
    // Approximate Lisbon climate normals, so the weather tool result and the answers agree.
    cases: [
      { month: "April", high: "20", low: "12", rainDays: "9", sea: "15" },
      { month: "May", high: "22", low: "14", rainDays: "6", sea: "16" },
      { month: "June", high: "26", low: "17", rainDays: "3", sea: "18" },
      { month: "September", high: "27", low: "18", rainDays: "4", sea: "20" },
      { month: "October", high: "23", low: "15", rainDays: "8", sea: "19" },
    ],
    vars: {
      days: ["3", "4", "5"],
      who: ["my partner and me", "a friend and me", "our family with two kids (7 and 10)", "two colleagues and me after a conference"],
      interest: ["food and neighbourhoods", "history and museums", "photography and viewpoints", "relaxed walks and cafés"],
    },
    titles: [
      "[[Trip|Holiday|Long weekend]] in Lisbon in {{month}}",
    ],
    starts: [
      {
        titles: [
          "Lisbon {{days}}-day itinerary[[| for {{interest}}]]",
          "{{days}} days in Lisbon[[| in {{month}}]]",
          "Lisbon trip: {{interest}}",
        ],
        user: "Can you plan a {{days}}-day trip to Lisbon in {{month}} for {{who}}? We're into {{interest}}. [[Not too packed please.|We like walking.|Budget is mid-range.]]",
        assistant: md`
Here's a relaxed plan that groups sights by neighbourhood, so you walk more and commute less. Lisbon is hilly — comfortable shoes matter more than anything else on this list.

**Day 1 — Baixa, Chiado & Alfama**
- Morning: Praça do Comércio, then up through Baixa to Chiado for coffee and a *pastel de nata* (Manteigaria is a favourite).
- Afternoon: ride the famous **tram 28** early or late to avoid queues (or just walk), explore Alfama's lanes, viewpoint at **Miradouro de Santa Luzia**.
- Evening: dinner in Alfama; many small places have live **fado** — book ahead for the better ones.

**Day 2 — Belém**
- Mosteiro dos Jerónimos (book tickets online; closed Mondays), Torre de Belém from the outside, and the original *Pastéis de Belém* (queue moves fast).
- Afternoon: MAAT or the riverside walk; sunset at **LX Factory** with dinner there.

**Day 3 — Sintra** (day trip, 40 min by train from Rossio)
- Pena Palace and the Moorish Castle; book timed tickets and go early. Taxis/tuk-tuks between sights save your legs.

**Extra days**: Cascais by the sea (train from Cais do Sodré, 40 min), or Príncipe Real and the Gulbenkian Museum for a slower day.

Practical: get a **Navegante** card for metro, trams and trains; in {{month}} expect highs around {{high}} °C, but bring a layer for the wind by the river. Want restaurant picks for each day?`,
      },
      {
        titles: [
          "Where to stay in Lisbon[[| in {{month}}| for {{days}} days]]",
          "Best Lisbon neighbourhood [[to stay in|for a first visit]]",
          "[[Chiado vs Alfama vs Príncipe Real|Baixa or Chiado for {{days}} nights?]]",
        ],
        user: "[[Which area should we stay in|Where should we book|What neighbourhood is best]] for a first trip to Lisbon[[ in {{month}}|]]? [[Baixa, Alfama or Príncipe Real?|We don't want too much nightlife noise.|We'll be {{who}}.|Staying {{days}} nights.]]",
        assistant: md`
Quick comparison for a first visit:

| Area | Good for | Watch out for |
|---|---|---|
| **Baixa / Chiado** | Central, flat-ish, metro access, easy to walk everywhere | Busier, pricier |
| **Alfama** | Atmosphere, fado, viewpoints | Steep lanes with stairs, taxis can't always get close |
| **Príncipe Real** | Quiet, green, great cafés and shops | Uphill walk back from the centre |
| **Bairro Alto** | Nightlife | Noisy until 2–3 am, especially on weekends |
| **Avenida da Liberdade** | Hotels, quieter, metro | Less charm in the evening |

For {{who}}, I'd pick **Chiado** (central and lively but not party-central) or **Príncipe Real** (calmer). Avoid Bairro Alto if you want to sleep. Whatever you book, check for a lift and air conditioning — many buildings are old, and summers get hot.`,
      },
    ],
    followUps: [
      {
        user: "Can you check the weather for Lisbon around then?",
        tool: {
          tool: "weather_lookup",
          location: "Lisbon, PT",
          month: "{{month}}",
          climate_normals: { avg_high_c: "{{high}}", avg_low_c: "{{low}}", rain_days: "{{rainDays}}", sea_temp_c: "{{sea}}" },
          source: "historical averages 1991–2020",
        },
        assistant: md`
Based on long-term averages for {{month}}, Lisbon is pleasant: daytime highs around {{high}} °C, evenings around {{low}} °C, and about {{rainDays}} days with rain in the month. The Atlantic stays cool (around {{sea}} °C), so swimming at Cascais is bracing rather than warm.

What to pack:
- Light layers and a windbreaker (it gets breezy by the river and up on the miradouros).
- Comfortable shoes with grip — the *calçada* (limestone cobbles) is slippery when wet.
- Sunscreen; the sun is strong even when it doesn't feel hot.

These are averages, not a forecast — check again a few days before you leave.`,
      },
      {
        user: "Restaurant picks please! Not tourist traps. 🍷",
        assistant: md`
A mix of classics and local favourites (book ahead for dinner, especially Thursday to Saturday):

- **Taberna da Rua das Flores** (Chiado) — small, creative Portuguese plates; no reservations, go early.
- **Cervejaria Ramiro** — seafood institution; order the garlic prawns and finish with a *prego* (steak sandwich), as locals do.
- **O Velho Eurico** (Alfama) — lively tasca with traditional dishes.
- **Time Out Market** — touristy but good for trying several things at once; go at off-peak hours.
- **A Cevicheria** (Príncipe Real) — Peruvian-Portuguese, look for the giant octopus on the ceiling.

Tips: *couvert* (bread, olives, cheese) placed on the table is not free — it's fine to send it back. Dinner starts late (8–9 pm), and *vinho verde* is the refreshing local choice in warm weather. Saúde! 🇵🇹`,
      },
      {
        user: "Sintra or Cascais if we only have time for one day trip?",
        assistant: md`
Depends on what you enjoy more:

- **Sintra** if you like palaces, gardens and fairytale architecture: Pena Palace, Quinta da Regaleira (the initiation well), the Moorish Castle. It's a full day, involves hills and crowds — go early on a weekday and pre-book timed tickets.
- **Cascais** if you'd rather relax: a seaside town with beaches, a coastal walk or bike ride to **Boca do Inferno** and Guincho beach, good seafood. Easy and low-effort.

Since you mentioned {{interest}}, I'd lean towards **Sintra** — but if you're tired after the city days, Cascais is the better rest day. You can also combine them with a car or tour (Sintra in the morning, Cabo da Roca, Cascais for sunset), though that's a long day.`,
      },
    ],
    points: [
      "Group sightseeing by neighbourhood to avoid long transfers",
      "Get a Navegante card for metro, trams and trains",
      "Ride tram 28 early or late to avoid the queues",
      "Book Sintra palace tickets ahead and go early",
      "Bring shoes with grip for the steep, slippery cobbles",
      "Couvert on the table isn't free; send it back if you don't want it",
    ],
  },
  {
    key: "meal-plan",
    domain: "personal",
    weight: 1.5,
    subject: "the meal plan",
    vars: {
      diet: ["vegetarian", "high-protein", "Mediterranean", "budget-friendly", "pescatarian", "flexitarian"],
      people: ["one person", "two adults", "a family of four", "two adults and a toddler"],
      time: ["30 minutes", "20 minutes", "45 minutes"],
      protein: ["120", "140", "160"],
    },
    titles: [
    ],
    starts: [
      {
        titles: [
          "Weekly {{diet}} meal plan[[| for {{people}}]]",
          "[[Meal prep|Weeknight dinners]] for {{people}}",
          "Quick dinners under {{time}}",
          "Easy {{diet}} dinners for {{people}}",
        ],
        user: "Can you make me a {{diet}} meal plan for a week, for {{people}}? Weeknight dinners should take max {{time}}. [[I hate wasting food.|I'm trying to cook more and order less.|We don't like mushrooms.]]",
        assistant: md`
Here's a week built around a few shared ingredients so little goes to waste. Dinners are the focus; breakfasts and lunches can rotate.

| Day | Dinner | Time |
|---|---|---|
| Mon | Chickpea & spinach curry with rice (cook extra rice) | 25 min |
| Tue | Egg fried rice with peas, spring onions & leftover rice | 15 min |
| Wed | Sheet-pan roasted vegetables & halloumi with couscous | 30 min |
| Thu | Lentil bolognese with wholewheat pasta (double batch) | 30 min |
| Fri | Homemade pizza on flatbreads with leftover roast veg | 20 min |
| Sat | Black bean tacos with quick pickled onions & avocado | 25 min |
| Sun | Leftover lentil bolognese as stuffed peppers or lasagne | 35 min |

**Prep on Sunday (45 min):** cook a pot of rice and lentils, chop onions/peppers, make a jar of pickled onions, wash greens.

**Shopping list highlights:** 2 cans chickpeas, 1 can black beans, 500 g red lentils, spinach (big bag), 6 peppers, 3 onions, garlic, ginger, halloumi, eggs, flatbreads, tortillas, avocados, canned tomatoes (3), coconut milk, frozen peas.

Adjust portions for {{people}} — I can turn this into a full quantified shopping list, or swap in a {{diet}} alternative for anything you don't like.`,
      },
      {
        titles: [
          "{{protein}} g protein a day [[without shakes|on a {{diet}} diet]]",
          "High-protein {{diet}} [[ideas|meals]]",
          "Hitting {{protein}} g protein without supplements",
        ],
        user: "I'm trying to hit about {{protein}} g of protein a day on a {{diet}} diet without protein shakes. Ideas?",
        assistant: md`
Very doable by adding a protein source to every meal rather than chasing one big one. Example day (~{{protein}} g):

| Meal | Food | Protein |
|---|---|---|
| Breakfast | 250 g Greek yogurt / skyr + 30 g oats + berries + 15 g pumpkin seeds | ~35 g |
| Lunch | Lentil salad (200 g cooked lentils) with feta (50 g) and vegetables | ~28 g |
| Snack | 2 eggs, or 150 g cottage cheese | ~13–18 g |
| Dinner | Tofu stir-fry (200 g firm tofu) with edamame (100 g) and noodles | ~40 g |
| Evening | Glass of milk or soy milk (300 ml) | ~10 g |

Staples that make it easy: skyr, cottage cheese, eggs, tofu/tempeh, edamame, lentils, chickpeas, seitan, and seeds. Spread protein across 3–4 meals of 25–40 g each. If you have any kidney issues or a medical condition, check high-protein plans with your doctor first.`,
      },
    ],
    followUps: [
      {
        user: "Can you give me a shopping list for a week of simple {{diet}} dinners, grouped by supermarket section?",
        assistant: md`
**Produce**
- Spinach (1 large bag), 6 bell peppers, 3 onions, 1 red onion, 1 garlic bulb, ginger (thumb-size), 3 avocados, 2 limes, spring onions, 1 courgette, 1 aubergine, cherry tomatoes, fresh coriander

**Canned & dry goods**
- 2 cans chickpeas, 1 can black beans, 3 cans chopped tomatoes, 1 can coconut milk, 500 g red lentils, 1 kg rice, 500 g wholewheat pasta, 300 g couscous, curry paste, taco seasoning

**Dairy & eggs**
- 6 eggs, 1 block halloumi (225 g), mozzarella (for pizza), Greek yogurt (for the tacos)

**Bakery**
- Flatbreads (4), small tortillas (8)

**Frozen**
- Peas, (optional) frozen berries for breakfasts

**Check the pantry for**: olive oil, soy sauce, cumin, paprika, chilli flakes, vinegar, sugar, salt.

Quantities are for {{people}}; tell me if I should scale them.`,
      },
      {
        user: "Some days I'm too tired to cook at all. What are 5-minute fallback meals that still fit?",
        assistant: md`
Keep these on hand for "can't be bothered" evenings:

1. **Loaded toast**: wholegrain toast, hummus, tomatoes, a fried or boiled egg.
2. **Quesadilla**: tortilla, canned black beans, cheese, a handful of spinach — 4 minutes in a pan.
3. **Instant noodle upgrade**: cook noodles, stir in frozen edamame and peas, an egg, soy sauce and spring onion.
4. **Yogurt bowl** as dinner: skyr, granola, nuts, fruit. No shame.
5. **Freezer meal**: portion the lentil bolognese from Thursday into containers — reheats in 3 minutes.

The last one is the real trick: whenever you cook something that freezes well, make double and freeze two portions.`,
      },
    ],
    points: [
      "Plan dinners around shared ingredients to reduce waste",
      "Batch-cook rice, lentils or grains on Sunday",
      "Double recipes that freeze well and freeze portions",
      "Spread protein over 3–4 meals of 25–40 g",
      "Group the shopping list by supermarket section",
      "Keep a few 5-minute fallback meals in stock",
    ],
  },
  {
    key: "marathon-training",
    domain: "personal",
    weight: 1.5,
    subject: "the training plan",
    vars: {
      race: ["the Berlin Marathon", "the Valencia Marathon", "the London Marathon", "the Chicago Marathon", "the Amsterdam Marathon"],
      weeks: ["16", "18", "20", "12"],
      currentKm: ["20", "25", "30", "35"],
      goalTime: ["sub-4:00", "4:15", "sub-3:45", "just finishing"],
    },
    titles: [
      "Training plan for {{race}}",
      "Training for {{race}}",
    ],
    starts: [
      {
        titles: [
          "{{weeks}}-week marathon plan",
          "Training for {{race}} from {{currentKm}} km/week",
          "Building up [[for|to]] {{race}}[[| in {{weeks}} weeks]]",
        ],
        user: "I signed up for {{race}} in {{weeks}} weeks. I currently run about {{currentKm}} km a week. Goal: {{goalTime}}. Can you outline a training plan?",
        assistant: md`
With {{weeks}} weeks and a {{currentKm}} km base, here's a structure (adjust if any week feels too much — consistency beats heroics):

**Phases**
1. **Base (first third):** build weekly volume by ~10% per week, mostly easy running. One long run per week, growing from ~12 km to ~20 km.
2. **Build (middle third):** add one quality session per week — tempo runs (e.g. 3 × 10 min at half-marathon effort) or marathon-pace segments inside long runs. Long runs up to 28–32 km.
3. **Peak & taper (last 3 weeks):** highest week ~3 weeks out, then reduce volume by ~25%, ~40%, ~60% while keeping a little intensity.

**Typical week in the build phase**
| Day | Session |
|---|---|
| Mon | Rest or easy 30 min |
| Tue | Easy 8–10 km + strides |
| Wed | Tempo / intervals |
| Thu | Easy 8 km |
| Fri | Rest |
| Sat | Easy 6 km |
| Sun | Long run |

**Rules that prevent most injuries**
- ~80% of running at an easy, conversational pace.
- Every 4th week is a lighter recovery week.
- Strength work twice a week (squats, lunges, calf raises, core) — 20 minutes is enough.

For {{goalTime}}, I can calculate your paces. What's a recent race result (5K or 10K)?`,
      },
      {
        titles: [
          "Long run pace for {{race}}",
          "How fast should long runs be[[?| for {{race}}?]]",
          "Easy pace vs [[marathon|goal]] pace[[| for {{race}}]]",
        ],
        user: "How fast should my long runs be? I'm aiming for {{goalTime}} in {{race}}[[ and currently run about {{currentKm}} km a week| in {{weeks}} weeks|]].[[ My watch says I'm always in zone 4.| Friends say I run them too fast.|]]",
        assistant: md`
Slower than most people think: long runs should mostly be **easy**, about 45–90 seconds per km slower than goal marathon pace. For reference, a 4:00 marathon is about 5:41/km, so easy long runs would be around 6:30–7:00/km.

Why slow? The long run is about time on feet, building endurance, fat metabolism and durability of muscles and tendons. Running it fast adds fatigue and injury risk with little extra benefit.

Once the base is there, make some long runs **specific**: e.g. 28 km with the last 8–10 km at goal marathon pace, every second or third week. That's also where you practise fueling.

Easy check: if you can't speak in full sentences, you're going too fast. Heart-rate-wise, roughly below 75–80% of your max.`,
      },
    ],
    followUps: [
      {
        user: "My shins started hurting after the long run last Sunday. Should I keep training?",
        assistant: md`
Pain along the inner shin during and after runs often fits **shin splints** (medial tibial stress syndrome), usually from increasing load too fast. But pain that's very localized to one spot on the bone, hurts when hopping, or gets worse at rest can be a **stress fracture** — that needs a doctor or sports physio, and continuing to run on it can make it much worse.

I can't diagnose this, so please get it checked if it doesn't clearly improve within a week or if any of those warning signs apply. In general, what helps with shin splints:
- Reduce running volume and intensity for 1–2 weeks; cross-train (cycling, swimming) to keep fitness.
- Check the last weeks: did volume jump more than ~10%? Did you switch shoes or start running on a harder surface?
- Calf and hip strengthening, gradual return.

Missing a week now is much better than missing the race — {{weeks}} weeks leaves room for that.`,
      },
      {
        user: "What should I eat and drink during the race? I've never used gels.",
        assistant: md`
For a marathon, aim for roughly **30–60 g carbohydrates per hour** (experienced runners go up to 90 g). One typical gel is 20–25 g, so that's a gel every 25–40 minutes, starting at around 45 minutes in.

Key rule: **nothing new on race day**. Practise with exactly the gels and drinks you'll use on your long runs, since stomachs need training too. Check which sports drink is handed out at the aid stations of {{race}} and try it beforehand.

Drink to thirst, usually 400–800 ml per hour depending on heat, and take some sodium (from sports drink or electrolyte tabs) on warm days. The day before: carb-rich meals (pasta, rice, bread), lower in fibre and fat. Race morning: familiar breakfast 2–3 hours before the start.`,
      },
      {
        user: "Race day ({{race}}) is in 10 days. How should I taper?",
        assistant: md`
At 10 days out, the hard work is done — nothing you do now will make you fitter, but too much can make you tired. Guidelines:

- **Volume**: about 50–60% of your peak week this week, 30–40% in race week.
- **Keep some intensity**: a short session with 3–4 × 1 km at marathon pace early in race week keeps your legs sharp.
- **Last long-ish run** (~14–16 km easy) this weekend.
- **Sleep** is the best performance enhancer you have — prioritize it, especially two nights before.
- **Don't try anything new**: shoes, food, gels, stretching routines.

Feeling sluggish or "phantom aches" during taper is completely normal. Trust the training. Good luck! 🏃`,
      },
    ],
    points: [
      "Increase weekly volume by no more than about 10%",
      "Run about 80% of your kilometres at an easy, conversational pace",
      "Schedule a recovery week every fourth week",
      "Practise race-day fueling on long runs",
      "Do strength training twice a week",
      "Taper over the last 2–3 weeks",
      "Get persistent or localized pain checked by a professional",
    ],
  },
  {
    key: "personal-budget",
    domain: "personal",
    weight: 1.5,
    subject: "the budget",
    vars: {
      income: ["€3,200", "$4,800", "£2,900", "CHF 6,500", "€2,450"],
      goal: ["build a 6-month emergency fund", "pay off a €7,000 credit card balance", "save for a house deposit", "start investing", "save for a wedding next year"],
      leak: ["food delivery", "subscriptions", "eating out", "online shopping"],
    },
    titles: [
      "Monthly budget with {{income}} income",
    ],
    starts: [
      {
        titles: [
          "How to {{goal}}[[| on {{income}}]]",
          "50/30/20 budget [[breakdown|for {{income}}]]",
          "Budget to {{goal}}",
          "[[Cutting|Reducing]] spending on {{leak}}",
        ],
        user: "My take-home pay is {{income}} a month. I want to {{goal}}, but somehow the money is always gone by the end of the month. [[Too much {{leak}}, probably.|I don't really track anything.]] Can you help me set up a budget?",
        assistant: md`
Let's make it simple enough that you'll actually keep it up.

**Step 1: Look back before planning ahead.** Export the last 2–3 months from your bank and sort spending into categories. Most people are surprised by one or two (very often {{leak}}).

**Step 2: Start with a 50/30/20 split** of {{income}} as a first draft:
- **50% needs**: rent, utilities, groceries, insurance, transport, minimum debt payments.
- **30% wants**: hobbies, travel and {{leak}}.
- **20% goals**: your goal to {{goal}}, plus retirement.

If needs are above 50% (common with high rent), shrink wants first, not goals.

**Step 3: Pay yourself first.** Set up an automatic transfer of the 20% on payday to a separate account. What you don't see, you don't spend.

**Step 4: Give wants a weekly allowance** — e.g. a separate card or account topped up every Monday. Easier than tracking categories.

**Step 5: Check in for 15 minutes a month.** Adjust categories, don't judge yourself.

If you share your rough monthly costs, I'll put together concrete numbers.`,
      },
      {
        titles: [
          "Emergency fund vs paying off [[debt|my credit card]]",
          "Pay off credit card or save first[[?| with {{income}} income?]]",
          "Credit card debt from {{leak}}",
        ],
        user: "Should I build an emergency fund first or pay off my credit card ({{leak}} got out of hand 😅)? The card charges [[19.9%|22%|24.5%]] interest.",
        assistant: md`
Common sensible order (general guidance — your details may change it):

1. **Small starter emergency fund**: about one month of essential expenses. This prevents a surprise bill from going straight back on the card.
2. **Pay off the credit card aggressively.** At ~20%+ interest, every euro paid off is a guaranteed ~20% "return" — nothing else beats that safely.
3. **Then build the full emergency fund**: 3–6 months of essential expenses in an instant-access savings account.
4. **Then invest** for longer-term goals.

Tactics for the card:
- Pay more than the minimum, by automatic transfer right after payday.
- Check for a 0% balance-transfer offer — it can save a lot, but note the transfer fee and the end date of the promotion.
- Stop using the card for {{leak}} while you pay it down; use a debit card with a weekly limit instead.`,
      },
    ],
    followUps: [
      {
        user: "My rent alone is 40% of my income. Is 50/30/20 even realistic?",
        assistant: md`
With rent at 40%, 50% for all needs is tight — and that's common in expensive cities. Adapt instead of giving up:

- Try **60/20/20** or **60/25/15** for now. The exact split matters less than saving *something* automatically every month.
- Look at the big fixed costs first: insurance, phone plan, energy tariff, subscriptions. One afternoon of comparing and cancelling often frees up 5% of income permanently.
- Long term, housing is the lever: a flatmate, a cheaper area at your next move, or negotiating rent at renewal.

A rule of thumb isn't a moral standard. A budget that you follow at 65/20/15 beats a perfect one you abandon in March.`,
      },
      {
        user: "Can you make a simple monthly budget table for me with these numbers: rent 1,150, groceries 350, transport 90, phone/internet 60, insurance 120?",
        assistant: md`
Here's a draft based on {{income}} take-home (amounts in your currency):

| Category | Amount | Note |
|---|---|---|
| Rent | 1,150 | |
| Groceries | 350 | |
| Transport | 90 | |
| Phone & internet | 60 | worth comparing plans once a year |
| Insurance | 120 | |
| **Needs total** | **1,770** | |
| Savings / goal: {{goal}} | set as % of income, automatic on payday | |
| Wants (weekly allowance) | the rest, split into 4 weekly amounts | includes {{leak}} |
| Buffer for irregular costs | ~5% | gifts, repairs, annual fees |

Fill in the savings line first — that's the one that moves you towards your goal — and let the wants allowance be whatever remains. After the first month, compare planned vs actual and adjust.`,
      },
    ],
    points: [
      "Review the last 2–3 months of spending before planning",
      "Automate savings on payday so you pay yourself first",
      "Use a weekly allowance for discretionary spending",
      "Keep a starter emergency fund of one month's expenses",
      "Pay off high-interest credit card debt before investing",
      "Review the budget for 15 minutes each month",
    ],
  },
  {
    key: "japan-rail-trip",
    domain: "personal",
    weight: 1,
    subject: "the Japan trip",
    vars: {
      days: ["10", "12", "14"],
      season: ["cherry blossom season (late March)", "autumn (November)", "early summer", "winter"],
      who: ["my partner and me", "two friends and me", "me, solo"],
    },
    titles: [
      "Japan itinerary: {{days}} days[[| in {{season}}]]",
      "Tokyo, Kyoto, Osaka route[[| for {{days}} days| in {{season}}]]",
      "Is the JR Pass worth it [[in {{season}}|for {{days}} days|for a first trip]]?",
      "Japan trip in {{season}}[[| for {{days}} days]]",
      "First trip to Japan, {{days}} days",
      "{{days}}-day Japan route and JR Pass",
    ],
    starts: [
      {
        user: "[[We have|We're planning|Got]] {{days}} days in Japan in {{season}}, {{who}}. [[First time.|First time in Asia, actually.|First visit!]] [[Tokyo, Kyoto, and...?|Where should we go besides Tokyo and Kyoto?|How would you split the days?]] Also, is the JR Pass still worth it?[[ 🇯🇵|]]",
        assistant: md`
A classic first-trip route with some breathing room:

- **Tokyo (東京) — 4–5 days**: Shibuya and Shinjuku, Asakusa (浅草) and Senso-ji early in the morning, teamLab, a day trip to Nikko or Kamakura.
- **Hakone (箱根) — 1 night** (optional): ryokan with onsen, views of Mt Fuji on a clear day.
- **Kyoto (京都) — 3–4 days**: Fushimi Inari at sunrise, Arashiyama, Gion in the evening, a day trip to **Nara (奈良)** for Todai-ji and the deer.
- **Osaka (大阪) — 2 days**: food in Dotonbori, Osaka Castle; fly home from Kansai (KIX) to avoid backtracking.

**JR Pass**: since the big price increase in October 2023, a 7-day pass costs ¥50,000, and for a simple Tokyo → Kyoto → Osaka route it usually **doesn't pay off**. Individual Shinkansen tickets (Tokyo–Kyoto is about ¥14,000 one way on the Nozomi) are cheaper. It can still be worth it if you add long trips (e.g. Hiroshima, Kanazawa).

Get a **Suica or ICOCA** (IC card, also on your phone's wallet) for local trains, buses and convenience stores. In {{season}}, book accommodation early — especially in Kyoto.`,
      },
    ],
    followUps: [
      {
        user: "Any etiquette things we should know so we don't embarrass ourselves? 😅",
        assistant: md`
The ones that matter most day to day:

- **Shoes off** at homes, ryokan, some restaurants and temples — look for a step up or a shoe rack. Toilet slippers stay in the toilet.
- **Onsen**: wash thoroughly at the shower stations *before* entering, no swimwear, small towel stays out of the water. Tattoos may be refused at some onsen; look for "tattoo-friendly" ones.
- **Quiet on trains**: no phone calls, keep conversations low.
- **No tipping** — it can cause confusion. Good service is standard.
- **Trash**: bins are rare; carry a small bag and dispose of rubbish at your hotel or convenience stores.
- **Eating while walking** is frowned upon in many places; eat next to the stall or vending machine.
- **Cash**: cards are widely accepted now, but carry some yen for small shops, temples and rural areas.

A simple "sumimasen" (すみません, excuse me / sorry) and "arigatou gozaimasu" (ありがとうございます, thank you) go a long way.`,
      },
      {
        user: "What should we book in advance?",
        assistant: md`
Book ahead (roughly in order of urgency):

1. **Accommodation** in Kyoto and any ryokan — popular ones sell out months ahead, especially in {{season}}.
2. **Popular attractions with timed tickets**: teamLab, the Ghibli Museum (tickets released monthly, sell out within hours), Shibuya Sky at sunset.
3. **Special restaurants** (kaiseki, omakase sushi) — often via the hotel concierge or booking platforms.
4. **Shinkansen seats** on busy dates (Golden Week, Obon in mid-August, New Year, cherry blossom weekends). Otherwise, booking a day or two ahead is fine.

Leave everything else flexible — a lot of the fun in Japan is wandering, convenience-store snacks and finding a tiny izakaya by accident.`,
      },
    ],
    points: [
      "Fly into Tokyo and out of Osaka (KIX) to avoid backtracking",
      "Compare individual Shinkansen tickets with the JR Pass price",
      "Use a Suica or ICOCA card for local transport",
      "Book Kyoto accommodation and ryokan early",
      "Wash before entering an onsen",
      "Carry some cash and a small bag for rubbish",
    ],
  },

  // ------------------------------------------------------------------ science and health
  {
    key: "crispr-explainer",
    domain: "science",
    weight: 1,
    subject: "CRISPR",
    vars: {
      audience: ["a 12-year-old", "my grandmother", "a non-biologist", "my high-school class", "a product manager"],
      disease: ["sickle cell disease", "beta thalassemia", "inherited blindness (LCA10)", "high cholesterol"],
    },
    titles: [
    ],
    starts: [
      {
        titles: [
          "How CRISPR [[works|gene editing works]]",
          "Explaining CRISPR to {{audience}}",
          "CRISPR [[in simple terms|for beginners]]",
        ],
        user: "[[Can you explain|Could you explain|Please explain|Help me understand]] how CRISPR [[works|gene editing works|actually works]][[, in a way I could explain to {{audience}}| so that I can explain it to {{audience}}| — simply enough for {{audience}}]]?[[ I keep hearing about it in the news.| I have to give a short talk about it.| Biology was a long time ago for me.|]]",
        assistant: md`
Here's a version that works for most audiences, with an analogy first and then what actually happens.

**The analogy: find-and-replace for DNA**
DNA is like an enormous instruction book — about 3 billion letters in humans. CRISPR is a tool that can **search** that book for one specific 20-letter phrase and **cut** the page right there. The cell then repairs the cut, and scientists can use that repair to switch a gene off or fix a typo.

**What actually happens**
1. **The guide**: scientists make a short piece of RNA (the *guide RNA*) whose letters match the DNA spot they want to edit.
2. **The scissors**: the guide is loaded into a protein called **Cas9**, which travels along the DNA until the guide finds its matching sequence.
3. **The cut**: Cas9 cuts both strands of the DNA at that spot. It also needs a short "PAM" sequence next to the target (for the common Cas9 it's NGG), which acts like a docking signal.
4. **The repair**: the cell patches the break. Often the patch is messy, which disables the gene. If scientists supply a DNA template, the cell can copy it in — that's how a specific fix can be made.

**Where it came from**: bacteria use CRISPR as an immune system — they store snippets of virus DNA and use Cas9 to cut the virus if it comes back. Jennifer Doudna and Emmanuelle Charpentier showed in 2012 how to reprogram it, and won the Nobel Prize in Chemistry in 2020.

For {{audience}}, the "find-and-replace" analogy plus the bacteria story is usually enough — want me to turn it into a 2-minute script?`,
      },
      {
        titles: [
          "CRISPR [[gene therapy|treatment]] for {{disease}}",
          "Casgevy and CRISPR [[treatments|therapy]]",
          "Approved CRISPR treatment for {{disease}}?",
        ],
        user: "I [[read|heard|saw on the news]] that there's now an approved CRISPR [[treatment|therapy]] for {{disease}}. [[How does that work in practice?|How does it actually work?|Is it really a cure?|What does the treatment involve for a patient?]]",
        assistant: md`
The first approved CRISPR therapy, **Casgevy** (exa-cel), was authorized in late 2023 in the UK and US for **sickle cell disease** and **beta thalassemia**. Other conditions, such as the ones you may have read about, are at various stages of clinical trials — worth checking the current status for {{disease}} specifically, as this field moves fast.

How Casgevy works:
1. **Collect** the patient's blood stem cells.
2. **Edit them in the lab**: CRISPR disables a switch (the *BCL11A* enhancer) that normally turns off **fetal haemoglobin** after birth.
3. **Chemotherapy** clears the patient's remaining bone marrow to make room.
4. **Infuse** the edited cells back; they settle in the bone marrow and produce red blood cells with fetal haemoglobin, which doesn't sickle.

In trials, most patients with sickle cell disease were free of severe pain crises for at least a year. The downsides: the conditioning chemotherapy is harsh (including infertility risk), the procedure requires weeks in hospital, and the list price is around $2 million. Long-term effects are still being followed.`,
      },
    ],
    followUps: [
      {
        user: "What are the risks or ethical concerns people talk about?",
        assistant: md`
The main ones:

**Technical risks**
- **Off-target edits**: Cas9 may cut at similar-looking places in the genome. Better guide design and high-fidelity Cas9 variants reduce this, and therapies are screened for it.
- **Unintended on-target effects**: large deletions or rearrangements at the cut site.
- **Mosaicism**: not all cells get edited the same way.

**Ethical questions**
- **Germline editing** (embryos, eggs, sperm): changes are inherited by future generations. In 2018 He Jiankui edited embryos that became twin girls — widely condemned, and he was imprisoned. Most countries prohibit clinical germline editing.
- **Enhancement vs therapy**: where's the line between treating disease and "improving" traits?
- **Access and cost**: therapies costing millions risk being available only in rich countries, while sickle cell disease mostly affects people in sub-Saharan Africa and India.

Somatic editing (in a patient's body cells, not inherited) to treat serious disease is broadly accepted; the debate is mostly about germline editing and fair access.`,
      },
      {
        user: "What's the difference between CRISPR-Cas9 and base editing or prime editing?",
        assistant: md`
Think of them as increasingly precise tools:

- **CRISPR-Cas9** = scissors. Cuts both DNA strands; the cell's repair does the rest, often messily. Great for switching genes off.
- **Base editing** = a pencil and eraser for single letters. A modified Cas9 that *doesn't cut both strands* is fused to an enzyme that chemically converts one letter into another (C→T or A→G). No double-strand break, fewer unwanted side effects. Many disease-causing mutations are single-letter changes.
- **Prime editing** = a word processor. Uses a nicking Cas9 plus a reverse transcriptase and an extended guide RNA that carries the new sequence, so it can write small insertions, deletions or any single-letter change.

Trade-off: the more precise tools are bigger and harder to deliver into cells, which is one of the main practical challenges in the field.`,
      },
    ],
    points: [
      "A guide RNA leads Cas9 to a matching 20-letter DNA sequence",
      "Cas9 cuts the DNA and the cell's repair disables or fixes the gene",
      "CRISPR originated as a bacterial immune system against viruses",
      "Casgevy, approved in 2023, treats sickle cell disease and beta thalassemia",
      "Germline editing is prohibited for clinical use in most countries",
      "Base and prime editing change DNA without cutting both strands",
    ],
  },
  {
    key: "blood-test-results",
    domain: "science",
    weight: 1,
    subject: "the blood test results",
    cases: [
      { marker: "ferritin", value: "14 ng/mL", range: "30–400 ng/mL", direction: "low" },
      { marker: "LDL cholesterol", value: "172 mg/dL", range: "below 116 mg/dL (target depends on risk)", direction: "high" },
      { marker: "TSH", value: "5.8 mIU/L", range: "0.4–4.0 mIU/L", direction: "high" },
      { marker: "vitamin D (25-OH)", value: "17 ng/mL", range: "30–100 ng/mL", direction: "low" },
      { marker: "HbA1c", value: "5.9%", range: "below 5.7%", direction: "high" },
    ],
    titles: [
      "Understanding my blood test[[: {{marker}}| results]]",
      "Is my {{direction}} {{marker}} a problem?",
      "What does {{marker}} {{value}} mean?",
      "Questions for my doctor about {{marker}}",
      "Blood test: {{marker}} flagged {{direction}}",
      "Blood work: {{marker}} out of range",
    ],
    starts: [
      {
        user: "[[I got my blood test results back.|My lab results just came in on the patient portal.|Just got my annual checkup bloodwork.|Got my blood work back today.]] My {{marker}} is {{value}} (reference range {{range}}), flagged as {{direction}}. [[Should I be worried?|What does that mean?|Is that bad?|How concerned should I be?]] [[My appointment is in two weeks.|The doctor hasn't called yet.|Everything else looked normal.|I feel fine, though.|]]",
        assistant: md`
I can explain what the value generally means, but I can't interpret your results in context — that's your doctor's job, since it depends on your history, symptoms, medications and other values. Please do discuss it with them; if you have severe symptoms in the meantime (e.g. chest pain, shortness of breath, fainting), seek care right away rather than waiting.

**What {{marker}} measures, in general**
- **Ferritin** reflects the body's iron stores. Low values usually indicate iron deficiency (e.g. from diet, blood loss, or absorption issues) — common and usually very treatable, but the *cause* should be found.
- **LDL cholesterol** is one of the main risk factors for cardiovascular disease. What counts as "too high" depends on your overall risk (age, blood pressure, smoking, diabetes, family history).
- **TSH** regulates the thyroid. A mildly raised value can indicate an underactive thyroid, but it can also fluctuate, so it's often re-tested with free T4 before any decision.
- **Vitamin D** low levels are very common, especially in winter at northern latitudes.
- **HbA1c** reflects average blood sugar over ~3 months; 5.7–6.4% is often classified as the prediabetes range.

A value of {{value}} is {{direction}} relative to the lab's range, but being outside a reference range doesn't automatically mean illness — ranges cover ~95% of healthy people, and labs differ.

Good questions to bring to your appointment:
1. "What could be causing this, and do we need further tests?"
2. "Should we repeat the test, and when?"
3. "Is there anything I should change or start now?"`,
      },
    ],
    followUps: [
      {
        user: "Is there anything I can do in the meantime myself?",
        assistant: md`
General, low-risk things that are reasonable while you wait — but please don't start supplements or medication based on one result without talking to your doctor, since some (iron, vitamin D in high doses, thyroid-related products) can cause harm or mask the underlying cause:

- **Write down symptoms** and when they started (fatigue, feeling cold, shortness of breath, thirst, etc.) — very useful for the appointment.
- **List all medications and supplements**, including biotin, which can distort some lab tests (notably thyroid tests).
- **Ask for a copy** of all results to have everything in one place.
- General habits that help many markers: balanced diet, regular exercise, limiting alcohol, not smoking, sleep.

If you start feeling noticeably worse before the appointment, call the practice and ask to be seen sooner.`,
      },
      {
        user: "Could the result be wrong? I felt fine that day.",
        assistant: md`
It's possible for a single result to be off, and that's why doctors often repeat tests before acting. Things that can influence results:

- **Timing**: some values vary with time of day (e.g. TSH is higher in the morning) or recent meals (fasting matters for some tests).
- **Recent illness or infection**: ferritin, for instance, rises with inflammation and can look "normal" even when iron stores are low.
- **Medications and supplements**: biotin, hormones, steroids and others can affect specific tests.
- **Lab variation**: different labs use different methods and ranges.
- **Sample handling**: rarely, delays or handling errors.

Feeling fine doesn't rule out a real finding — many conditions have no symptoms early on. Your doctor can decide whether a repeat test makes sense; ask them directly.`,
      },
    ],
    points: [
      "Discuss results with your doctor, who can interpret them in context",
      "A value outside the reference range isn't automatically an illness",
      "Don't start supplements based on one result without medical advice",
      "Write down symptoms and medications before the appointment",
      "Ask whether and when the test should be repeated",
      "Seek care immediately for severe symptoms",
    ],
  },
  {
    key: "black-holes",
    domain: "science",
    weight: 1,
    subject: "black holes",
    vars: { audience: ["my kid", "a curious 10-year-old", "someone without a physics background", "my book club"] },
    titles: [
      "How do black holes form[[?| and grow?]]",
      "What happens if you fall into a black hole[[|?]]",
      "Black holes explained for {{audience}}",
      "[[Black hole|Black holes]] and event horizons",
      "Falling into a black hole[[| explained]]",
      "Spaghettification and event horizons",
    ],
    starts: [
      {
        user: "[[How do black holes form|How does a black hole form|Where do black holes come from|What actually creates a black hole]], and what would [[actually happen|happen to you|you experience|you see]] if you fell into one? [[Asking for {{audience}}.|I've always wondered.|We had a debate about it at dinner.|Just watched Interstellar again.|Saw a documentary and now I'm curious.|]]",
        assistant: md`
**How they form**
Most black holes form when a massive star — at least roughly 20 times the mass of our Sun — runs out of fuel. Without the energy from fusion pushing outward, gravity wins: the core collapses in a fraction of a second, often triggering a supernova explosion. If enough mass is left in the core, nothing can stop the collapse, and a black hole forms.

The boundary is the **event horizon**: the distance at which the escape velocity equals the speed of light. Inside it, nothing — not even light — can get out. For a black hole with 10 solar masses, the event horizon has a radius of only about 30 km.

There are also **supermassive black holes** at the centres of galaxies, with millions to billions of solar masses. Ours, **Sagittarius A\***, has about 4 million. How they grew so big so early in the universe's history is still an active research question.

**Falling in**
- Far away, nothing special: a black hole's gravity is like any other object of the same mass.
- Closer in, **tidal forces** take over: gravity pulls much harder on your feet than your head, stretching you out — physicists really call it *spaghettification*. Near a small black hole this happens before you reach the horizon.
- For a supermassive black hole, tidal forces at the horizon are gentle, so you'd cross it without noticing anything locally.
- To someone watching from far away, you'd appear to slow down and fade, redder and redder, never quite crossing — an effect of time dilation.

The first image of a black hole's shadow (galaxy M87) was published by the Event Horizon Telescope in 2019; the image of Sagittarius A* followed in 2022.`,
      },
    ],
    followUps: [
      {
        user: "What is Hawking radiation? Do black holes really evaporate?",
        assistant: md`
In 1974 Stephen Hawking showed, by combining quantum theory with general relativity, that black holes aren't completely black: they should emit a faint thermal glow, now called **Hawking radiation**. The popular explanation — particle pairs appearing near the horizon, one falling in and one escaping — is a simplification, but it captures the idea that quantum effects near the horizon let energy leak away.

Consequences:
- The black hole slowly loses mass, so yes, in principle it **evaporates**.
- Smaller black holes are hotter and evaporate faster; big ones are extremely cold.
- A black hole with the mass of the Sun would take around 10^67 years — far longer than the current age of the universe (~13.8 billion years). It's currently absorbing more energy from the cosmic microwave background than it emits.

Hawking radiation has never been observed directly from a real black hole — it's far too faint — but it's widely accepted theoretically and is central to the "information paradox": what happens to the information about everything that fell in.`,
      },
      {
        user: "Could a black hole ever swallow Earth?",
        assistant: md`
No realistic danger:

- **The Sun won't become one**: it's far too light. In about 5 billion years it will become a red giant and then a white dwarf.
- **The nearest known black holes** are over 1,500 light-years away (e.g. Gaia BH1). They'd need to come extremely close to affect us, and space is mostly empty.
- **If the Sun were magically replaced by a black hole of the same mass**, Earth would keep orbiting exactly as before — just in the dark and very cold. Black holes don't "suck"; their gravity at a given distance is the same as any object of equal mass.
- **Particle accelerators** like the LHC can't create dangerous black holes; cosmic rays with far higher energies have hit Earth for billions of years without any.

So for {{audience}}: fascinating, but nothing to lose sleep over. 🌌`,
      },
    ],
    points: [
      "Black holes form when the core of a very massive star collapses",
      "Nothing can escape from inside the event horizon",
      "Tidal forces stretch objects near small black holes",
      "Supermassive black holes sit at the centres of galaxies",
      "Hawking radiation makes black holes slowly evaporate in theory",
      "The first image of a black hole's shadow was published in 2019",
    ],
  },
  {
    key: "sleep-and-caffeine",
    domain: "science",
    weight: 1,
    subject: "sleep",
    vars: {
      cups: ["3", "4", "5"],
      lastCup: ["4 pm", "5 pm", "after dinner", "2 pm"],
      bedtime: ["10:30 pm", "midnight", "1 am"],
    },
    titles: [
    ],
    starts: [
      {
        titles: [
          "Caffeine and [[sleep quality|deep sleep]]",
          "{{cups}} coffees a day and poor sleep",
          "Coffee at {{lastCup}}, bed at {{bedtime}}",
          "How late can I drink coffee[[?| before a {{bedtime}} bedtime?]]",
        ],
        user: "I drink about {{cups}} [[coffees|cups of coffee|espressos]] a day, the last one around {{lastCup}}, and go to bed at {{bedtime}}. [[I fall asleep okay but wake up tired.|I sleep 7 hours but still feel exhausted.|My sleep tracker says my deep sleep is low.]] [[Could the coffee be the problem?|Is caffeine the culprit?|Should I cut back?]]",
        assistant: md`
Quite possibly. Caffeine has a **half-life of roughly 5 hours** in most adults (anywhere from ~2 to 10 hours depending on genetics, pregnancy, liver function, and some medications). So from a coffee at {{lastCup}}, a substantial share is still in your system at {{bedtime}}.

Falling asleep fine doesn't mean sleep quality is fine: studies show caffeine in the evening can reduce **deep (slow-wave) sleep** and total sleep time, even when people don't notice it. That would match "waking up tired".

An experiment to try for 2 weeks:
1. **Last caffeine 8–10 hours before bed** — for a {{bedtime}} bedtime, that's early afternoon at the latest.
2. Keep the total moderate; up to ~400 mg per day (about 4 cups of filter coffee) is generally considered safe for healthy adults, but less may suit you better.
3. Watch hidden sources: tea, cola, energy drinks, dark chocolate, some painkillers.
4. Track how rested you feel each morning on a 1–5 scale.

If you still wake up unrefreshed, loud snoring or pauses in breathing (ask a partner), or daytime sleepiness persist, talk to a doctor — sleep apnoea and other conditions are common and treatable.`,
      },
      {
        titles: [
          "Why do I wake up [[at night|so early]]?",
          "Waking up at night and can't [[sleep|fall back asleep]]",
          "Improving sleep without [[medication|sleeping pills]]",
        ],
        user: "I keep waking up around [[3 am|4 am|2:30]] and can't fall back asleep for [[an hour|ages|45 minutes or so]]. [[What helps?|Any tips?|What can I do about it?]][[ It's been going on for a few weeks.| Started after a stressful month at work.|]]",
        assistant: md`
Middle-of-the-night waking is common, and a few things help many people:

**During the night**
- Don't check the time — clock-watching raises stress and makes it harder to fall back asleep.
- If you're awake for more than ~20 minutes, get up, go to another room with dim light, and do something calm (reading on paper) until you feel sleepy. This keeps the bed associated with sleep.
- Keep the room cool (around 17–19 °C), dark and quiet.

**During the day**
- Same wake-up time every day, including weekends — the strongest lever for a stable rhythm.
- Daylight in the morning, and physical activity (not too close to bedtime).
- Less alcohol: it helps you fall asleep but fragments sleep in the second half of the night — exactly around 3 am.
- Caffeine cut-off in the early afternoon.

If it happens most nights for more than about three months and affects your days, that's chronic insomnia. The best-studied treatment is **CBT-I** (cognitive behavioural therapy for insomnia), available via doctors, therapists and validated apps. Worth discussing with a doctor, also to rule out other causes.`,
      },
    ],
    followUps: [
      {
        user: "What about a nap in the afternoon — good or bad?",
        assistant: md`
Short naps can be good: **10–20 minutes** before about 3 pm improves alertness without grogginess. Longer naps take you into deep sleep, which makes waking up harder and can reduce your sleep pressure at night.

If you have trouble sleeping at night, skip naps for a while — you want to arrive at bedtime properly tired. A "coffee nap" (a coffee right before a 15-minute nap, since caffeine kicks in after ~20 minutes) works for some people, but given your late-day caffeine, I'd keep it early in the afternoon or leave it out.`,
      },
      {
        user: "Do sleep trackers actually help?",
        assistant: md`
They're useful for **trends**, less for exact numbers:

- Total sleep time and timing are measured reasonably well by modern watches and rings.
- Sleep stages (deep, REM) are *estimates* from movement and heart rate, and can be off considerably compared to a lab sleep study.
- Use them to test changes: e.g. "Did my resting heart rate and sleep duration improve in the two weeks without afternoon coffee?"

A downside for some people: obsessing over the scores makes sleep worse ("orthosomnia"). If you notice you worry about your score, take a break from it — how rested you feel in the morning is the metric that matters most.`,
      },
    ],
    points: [
      "Caffeine has a half-life of roughly 5 hours",
      "Stop caffeine 8–10 hours before bedtime",
      "Keep the same wake-up time every day, including weekends",
      "Get up after 20 minutes awake instead of lying in bed",
      "Alcohol fragments sleep in the second half of the night",
      "CBT-I is the first-line treatment for chronic insomnia",
      "See a doctor about loud snoring or breathing pauses",
    ],
  },

  // ------------------------------------------------------------------ more engineering and writing
  {
    key: "python-asyncio",
    domain: "engineering",
    weight: 1.5,
    subject: "the asyncio code",
    vars: {
      pyv: ["3.11", "3.12", "3.13"],
      lib: ["httpx", "aiohttp"],
      urls: ["2,000 URLs", "500 API calls", "10k product pages", "300 S3 objects"],
    },
    titles: [
      "Async HTTP in Python {{pyv}}[[| with {{lib}}]]",
    ],
    starts: [
      {
        titles: [
          "Concurrent requests with asyncio[[| and {{lib}}]]",
          "Fetching {{urls}} with {{lib}}",
          "Limiting concurrency in asyncio[[| with {{lib}}]]",
        ],
        user: "[[I need to fetch|I have to download|Our script fetches]] {{urls}} in Python {{pyv}}. Doing it sequentially with requests takes [[40 minutes|forever|over an hour]]. How do I do it concurrently with asyncio and {{lib}} without hammering the server?",
        assistant: md`
Use one shared client, a semaphore to cap concurrency, and a \`TaskGroup\` (Python 3.11+):

\`\`\`python
import asyncio
import httpx

CONCURRENCY = 20

async def fetch(client: httpx.AsyncClient, sem: asyncio.Semaphore, url: str) -> tuple[str, int, bytes | None]:
    async with sem:
        try:
            r = await client.get(url, timeout=15.0)
            r.raise_for_status()
            return url, r.status_code, r.content
        except httpx.HTTPError as exc:
            return url, getattr(exc.response, "status_code", 0) if hasattr(exc, "response") else 0, None

async def main(urls: list[str]):
    sem = asyncio.Semaphore(CONCURRENCY)
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, follow_redirects=True) as client:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(fetch(client, sem, u)) for u in urls]
    return [t.result() for t in tasks]

results = asyncio.run(main(urls))
\`\`\`

Why this shape:
- **One client** reuses connections (keep-alive), much faster than a client per request.
- **Semaphore** caps in-flight requests; 10–50 is polite for most servers. If it's someone else's API, respect their rate limit and \`Retry-After\` headers.
- **Catching errors inside \`fetch\`** matters with \`TaskGroup\`: an uncaught exception cancels all other tasks.

With 20 concurrent requests, {{urls}} typically take a minute or two instead of 40.`,
      },
      {
        titles: [
          "RuntimeWarning: coroutine [[was never awaited|'sync_orders' never awaited]]",
          "Calling async code from sync Python[[| {{pyv}}]]",
          "Coroutine [[never awaited|not running]] warning",
        ],
        user: md`
[[I get this warning and nothing happens|My async function never runs, just this warning|Python {{pyv}} prints this and the sync never happens]]:

\`\`\`
RuntimeWarning: coroutine 'sync_orders' was never awaited
\`\`\`

[[I'm calling \`sync_orders()\` from a normal function.|It's called from a Celery task.|The function is called from our CLI entry point.]][[ What am I missing?|]]`,
        assistant: md`
Calling an \`async def\` function doesn't run it — it only creates a **coroutine object**. Something has to await it or schedule it on an event loop; otherwise it's garbage-collected and Python warns.

Fixes depending on where you are:

\`\`\`python
# In a plain script / sync entry point: start an event loop
asyncio.run(sync_orders())

# Inside another async function: await it
await sync_orders()

# Fire-and-forget inside async code: create a task AND keep a reference
task = asyncio.create_task(sync_orders())
background_tasks.add(task)
task.add_done_callback(background_tasks.discard)
\`\`\`

Don't call \`asyncio.run()\` from inside code that's already running in an event loop (e.g. a FastAPI endpoint or Jupyter) — you'll get \`RuntimeError: asyncio.run() cannot be called from a running event loop\`. There, just \`await\` it.

The reference in the third example matters: the event loop only keeps weak references to tasks, so an unreferenced task can disappear mid-execution.`,
      },
    ],
    followUps: [
      {
        user: "Some requests get 429 Too Many Requests. How do I add retries with backoff?",
        assistant: md`
Retry only on transient errors (429, 502, 503, 504, timeouts), honour \`Retry-After\`, and add jitter:

\`\`\`python
import random

RETRYABLE = {429, 502, 503, 504}

async def get_with_retry(client, url, attempts=5):
    for attempt in range(attempts):
        try:
            r = await client.get(url, timeout=15.0)
            if r.status_code not in RETRYABLE:
                r.raise_for_status()
                return r
            delay = float(r.headers.get("Retry-After", 0)) or min(30, 2 ** attempt)
        except (httpx.TimeoutException, httpx.TransportError):
            delay = min(30, 2 ** attempt)
        await asyncio.sleep(delay + random.uniform(0, 0.5))
    raise RuntimeError(f"giving up on {url} after {attempts} attempts")
\`\`\`

If you see many 429s, lower the semaphore instead of retrying harder. The \`tenacity\` library provides the same pattern as a decorator if you prefer.`,
      },
      {
        user: "What's the difference between `asyncio.gather` and `TaskGroup`?",
        assistant: md`
Both run awaitables concurrently; they differ in **error handling**:

- \`asyncio.gather(*aws)\`: if one fails, the exception propagates but the **other tasks keep running** in the background (unless you cancel them). With \`return_exceptions=True\`, you get exceptions as results instead.
- \`asyncio.TaskGroup\` (3.11+): if one task fails, **all other tasks are cancelled**, and errors are raised together as an \`ExceptionGroup\` (handle with \`except*\`). No orphaned tasks.

\`\`\`python
try:
    async with asyncio.TaskGroup() as tg:
        for u in urls:
            tg.create_task(fetch(client, u))
except* httpx.HTTPError as group:
    for exc in group.exceptions:
        log.warning("request failed: %s", exc)
\`\`\`

Rule of thumb: **TaskGroup** when tasks belong together (all-or-nothing), **gather with \`return_exceptions=True\`** when you want best-effort results like in a crawler.`,
      },
    ],
    points: [
      "Share one HTTP client to reuse connections",
      "Cap concurrency with an `asyncio.Semaphore`",
      "Use `asyncio.run()` at the entry point and `await` everywhere else",
      "Keep references to fire-and-forget tasks",
      "Retry 429 and 5xx responses with backoff, jitter and `Retry-After`",
      "Use TaskGroup for all-or-nothing work and gather for best-effort",
    ],
  },
  {
    key: "regex-log-parsing",
    domain: "engineering",
    weight: 1,
    subject: "the log parsing",
    vars: {
      tool: ["Python", "grep and awk", "JavaScript", "Go"],
      logType: ["NGINX access logs", "application logs", "Apache logs", "HAProxy logs"],
    },
    titles: [
      "Regex to parse {{logType}}[[| in {{tool}}]]",
      "Extracting status codes from {{logType}}",
      "Count 5xx errors per endpoint[[| with {{tool}}]]",
      "Parsing {{logType}} with {{tool}}",
      "Log parsing regex[[| for {{logType}}]]",
      "5xx errors by endpoint from {{logType}}",
    ],
    starts: [
      {
        user: md`
[[I need to|How do I|Trying to]] parse {{logType}} with {{tool}} and count [[5xx errors|server errors|502/503/504s]] per endpoint[[ for an incident review| for the last 24 hours|]][[.|?]] Lines look like this:

\`\`\`
203.0.113.42 - - [14/Oct/2026:09:12:55 +0200] "GET /api/orders/1842?expand=items HTTP/1.1" 502 173 "-" "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5)" 0.812
\`\`\``,
        assistant: md`
A regex with named groups for the combined log format (plus the trailing request time):

\`\`\`python
import re
from collections import Counter

LINE = re.compile(
    r'(?P<ip>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] '
    r'"(?P<method>[A-Z]+) (?P<path>[^ ?"]+)(?:\?[^ "]*)? (?P<proto>[^"]+)" '
    r'(?P<status>\d{3}) (?P<bytes>\d+|-) "(?P<referer>[^"]*)" "(?P<agent>[^"]*)"'
    r'(?: (?P<rt>[\d.]+))?'
)
ID = re.compile(r"/\d+(?=/|$)")

errors = Counter()
with open("access.log", encoding="utf-8", errors="replace") as f:
    for line in f:
        m = LINE.match(line)
        if m and m["status"].startswith("5"):
            errors[ID.sub("/:id", m["path"])] += 1

for path, n in errors.most_common(10):
    print(f"{n:6d}  {path}")
\`\`\`

Details that matter:
- The query string is excluded from \`path\`, and numeric ids are normalized (\`/api/orders/:id\`), otherwise every order id becomes its own "endpoint".
- \`[^"]*\` instead of \`.*\` keeps each group inside its quotes — \`.*\` is greedy and would swallow everything up to the *last* quote on the line.
- \`errors="replace"\` avoids crashes on odd bytes in user agents.

Quick shell equivalent for a one-off: \`awk '$9 ~ /^5/ {split($7, p, "?"); print p[1]}' access.log | sort | uniq -c | sort -rn | head\`.`,
      },
    ],
    followUps: [
      {
        user: "Why does my regex `\".*\"` match way more than one quoted field?",
        assistant: md`
Because \`*\` is **greedy**: \`.*\` matches as much as possible and only backtracks as far as needed, so \`".*"\` goes from the *first* quote to the *last* quote on the line, spanning several fields.

Two fixes:
- **Lazy quantifier**: \`".*?"\` — matches as little as possible, stopping at the next quote.
- **Negated character class** (usually better): \`"[^"]*"\` — "a quote, then any non-quote characters, then a quote". It's faster (no backtracking) and states the intent exactly.

The same applies to brackets: \`\[[^\]]*\]\` for \`[14/Oct/2026:09:12:55 +0200]\`. Test patterns on regex101.com with your real lines — it highlights each group and explains every token.`,
      },
      {
        user: "Can I also get the p95 response time per endpoint?",
        assistant: md`
Yes — collect the request times per normalized path and compute percentiles:

\`\`\`python
from collections import defaultdict
from statistics import quantiles

times = defaultdict(list)
for line in open("access.log", encoding="utf-8", errors="replace"):
    m = LINE.match(line)
    if m and m["rt"]:
        times[ID.sub("/:id", m["path"])].append(float(m["rt"]))

for path, values in sorted(times.items(), key=lambda kv: -len(kv[1]))[:15]:
    if len(values) >= 20:
        p95 = quantiles(values, n=100)[94]
        print(f"{path:40s} n={len(values):6d}  p95={p95 * 1000:7.0f} ms")
\`\`\`

Skip endpoints with very few requests (here < 20) — percentiles on tiny samples are noise. For bigger files or continuous monitoring, it's worth shipping logs into something like Loki, Elasticsearch or ClickHouse instead of scripting it each time.`,
      },
    ],
    points: [
      "Use named groups to keep log regexes readable",
      "Prefer negated classes like `[^\"]*` over greedy `.*`",
      "Normalize ids in paths before counting per endpoint",
      "Strip query strings from paths",
      "Open log files with `errors=\"replace\"` to survive odd bytes",
      "Test patterns on real lines, e.g. with regex101",
    ],
  },
  {
    key: "incident-postmortem",
    domain: "writing",
    weight: 1.5,
    subject: "the postmortem",
    cases: [
      { incident: "checkout outage", duration: "47 minutes", cause: "an expired TLS certificate on the payments gateway", impact: "about 3,100 failed checkouts" },
      { incident: "login outage", duration: "2 hours 10 minutes", cause: "a config change that pointed the auth service at the staging identity provider", impact: "roughly 40% of login attempts failed" },
      { incident: "data sync delay", duration: "6 hours", cause: "a full disk on the Kafka brokers after a retention setting was removed", impact: "dashboards showed stale data for all customers" },
      { incident: "severe API latency spike", duration: "35 minutes", cause: "a missing index after a migration on the orders table", impact: "p99 latency rose from 300 ms to 9 s" },
    ],
    titles: [
      "Postmortem for [[the |yesterday's |]]{{incident}}",
      "Blameless postmortem [[template|draft]]",
      "Writing up the {{incident}}[[| ({{duration}})]]",
      "Incident report: {{incident}}",
      "Postmortem draft: {{incident}}",
    ],
    starts: [
      {
        user: "We had a {{incident}} [[yesterday|on {{weekday}}|last night|this morning|over the weekend]] — [[{{duration}}|it lasted {{duration}}]], caused by {{cause}}[[, {{impact}}|; {{impact}}| ({{impact}})]]. [[Can you help me write a blameless postmortem?|I need to write the postmortem[[ by {{weekday}}| for {{manager}}|]]. Can you help?|Could you draft a blameless postmortem I can share with the team?|What should the postmortem look like?|I'm the incident lead and have to write it up — where do I start?]]",
        assistant: md`
Here's a draft structure with what you've told me filled in; placeholders are in brackets.

---

# Postmortem: {{incident}}

**Status:** Draft · **Authors:** [names] · **Severity:** [SEV-2]

## Summary
For {{duration}}, [service/users] were affected by a {{incident}}: {{impact}}. The trigger was {{cause}}. Service was restored by [action] at [time].

## Impact
- Customer impact: {{impact}}
- Duration: {{duration}} (detected after [X] minutes)
- Support tickets: [n]; revenue impact: [estimate, if known]

## Timeline (all times UTC)
| Time | Event |
|---|---|
| [hh:mm] | Trigger: [change/event] |
| [hh:mm] | First alert / customer report |
| [hh:mm] | Incident declared, [role] takes incident command |
| [hh:mm] | Cause identified |
| [hh:mm] | Mitigation applied, recovery confirmed |

## Root cause and contributing factors
The direct cause was {{cause}}. Contributing factors: [Why wasn't it caught earlier? Missing alert, test, or check? Unclear ownership?]

## What went well / what went poorly
- Well: [e.g. fast rollback]
- Poorly: [e.g. detection took too long]

## Action items
| Action | Type | Owner | Due |
|---|---|---|---|
| [Alert/check that would have caught this] | Detect | [name] | [date] |
| [Change that prevents recurrence] | Prevent | [name] | [date] |

---

Blameless wording tip: describe what the *system* allowed ("the deploy pipeline didn't validate the config"), not who made a mistake. The question is always why the mistake was easy to make and hard to notice.`,
      },
    ],
    followUps: [
      {
        user: "What action items would you suggest for this one?",
        assistant: md`
For a {{incident}} caused by {{cause}}, I'd aim for one item per layer — detect, mitigate, prevent:

**Detect sooner**
- Alert on the symptom customers feel (error rate or latency of the affected flow), not only on infrastructure metrics.
- A synthetic check that exercises the critical path every minute.

**Mitigate faster**
- A runbook entry for this failure mode with the exact commands used yesterday.
- Make the fix a one-step action (rollback, config revert, failover) that on-call can run without deep context.

**Prevent recurrence**
- An automated guard for the specific cause — e.g. expiry monitoring for certificates, config validation in CI, disk usage alerts with retention enforced as code, or migration checks for missing indexes.
- Look for the same class of problem elsewhere ("where else could this happen?").

Keep it to 3–6 items with owners and dates; a long list of vague items rarely gets done. Track them in the normal backlog and review completion in two weeks.`,
      },
      {
        user: "How do I present this to leadership without it sounding like excuses?",
        assistant: md`
Lead with ownership and numbers, keep it short, and end with what changes:

1. **What happened** (2 sentences): "{{incident}} for {{duration}}; {{impact}}."
2. **Why** (1–2 sentences): the cause and the one key contributing factor — in plain language.
3. **What we did**: how it was resolved, and how quickly.
4. **What we're changing**: the top 3 action items with dates.
5. **What we need** (if anything): time, budget or a decision.

Avoid jargon, blame and long timelines on slides — link the full postmortem for anyone who wants details. Leaders mostly want to know: do you understand it, and is it less likely to happen again?`,
      },
    ],
    points: [
      "Start with a two-sentence summary of impact and cause",
      "Build a UTC timeline from trigger to recovery",
      "Describe what the system allowed, not who made a mistake",
      "Ask why the problem was easy to make and hard to notice",
      "Limit action items to 3–6, each with an owner and due date",
      "Add an alert on the customer-facing symptom",
    ],
  },
];
