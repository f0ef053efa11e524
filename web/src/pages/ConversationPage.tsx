/**
 * One conversation: its title, owner and dates, and its messages oldest first, in pages of 100
 * ("Load more messages"). A link from search names a message (`?message=<id>`) and the query
 * (`?q=`): pages are loaded until that message is there, then it is scrolled into view, marked,
 * focused (so a screen reader starts there) and the query's words in it are marked. Messages are
 * rendered Markdown (MarkdownText.tsx); a tool call or result is a closed disclosure of its JSON
 * (ToolMessage.tsx).
 *
 * Sends `ConversationView` (the conversation and a page of its messages), again with `after`
 * for each further page. A conversation that does not exist, was deleted or belongs to another
 * organization is null: the page says so, the same in all three cases, as the API does.
 */
import { BackToResults } from "../components/BackToResults";
import { PersonName } from "../components/PersonName";
import { gql } from "@apollo/client";
import { useQuery } from "@apollo/client/react";
import { useEffect, useMemo } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { queryTerms } from "../conversations/MarkedWords";
import { useLinkedPages } from "../conversations/reveal";
import { ToolMessage, toolPayload } from "../conversations/ToolMessage";
import { MarkdownText } from "../markdown/MarkdownText";
import { formatDateTime } from "../documents/format";
import "./ConversationPage.css";

const MESSAGES_PER_PAGE = 100;

type MessageRole = "USER" | "ASSISTANT" | "SYSTEM" | "TOOL";

interface ConversationViewData {
  conversation: {
    id: string;
    title: string;
    owner: { id: string; name: string };
    createdAt: string;
    updatedAt: string;
    messageCount: number;
    messages: {
      nodes: { id: string; role: MessageRole; content: string; position: number; createdAt: string }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
  } | null;
}

interface ConversationViewVariables {
  id: string;
  first: number;
  after?: string | null;
}

const CONVERSATION_VIEW = gql`
  query ConversationView($id: ID!, $first: Int!, $after: String) {
    conversation(id: $id) {
      id
      title
      owner {
        id
        name
      }
      createdAt
      updatedAt
      messageCount
      messages(first: $first, after: $after) {
        nodes {
          id
          role
          content
          position
          createdAt
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`;

const ROLE_LABELS: Record<MessageRole, string> = { USER: "User", ASSISTANT: "Assistant", SYSTEM: "System", TOOL: "Tool" };

export default function ConversationPage() {
  const { id = "" } = useParams();
  const [searchParams] = useSearchParams();
  const targetMessageId = searchParams.get("message");
  const terms = useMemo(() => queryTerms(searchParams.get("q")), [searchParams]);
  const { data, loading, error, fetchMore, refetch } = useQuery<ConversationViewData, ConversationViewVariables>(CONVERSATION_VIEW, {
    variables: { id, first: MESSAGES_PER_PAGE },
    errorPolicy: "all",
  });
  const conversation = data?.conversation ?? null;
  const messages = conversation?.messages.nodes ?? [];
  const pageInfo = conversation?.messages.pageInfo;
  const { loadMore, loadingMore, moreError, targetLoaded, searchingForTarget } = useLinkedPages({
    nodes: messages,
    pageInfo,
    targetId: targetMessageId,
    elementId: (messageId) => `message-${messageId}`,
    fetchNext: (after) =>
      fetchMore({
        variables: { after },
        // The next page joins the messages already shown (the cache keeps one list per `after`).
        updateQuery: (previous, { fetchMoreResult }) => {
          if (!previous.conversation || !fetchMoreResult.conversation) return previous;
          return {
            conversation: {
              ...fetchMoreResult.conversation,
              messages: {
                ...fetchMoreResult.conversation.messages,
                nodes: [...previous.conversation.messages.nodes, ...fetchMoreResult.conversation.messages.nodes],
              },
            },
          };
        },
      }),
  });

  useEffect(() => {
    document.title = conversation ? `${conversation.title} · Context search` : "Conversation · Context search";
  }, [conversation]);

  if (loading && !data) return <p role="status">Loading the conversation…</p>;
  if (!conversation) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">{error ? "The conversation could not be loaded" : "Conversation not found"}</h1>
        {error ? (
          <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} />
        ) : (
          <p>There is no such conversation in your organization: it may have been deleted, or the link may be for another organization.</p>
        )}
        <p>
          <Link to="/">Go to search</Link>
        </p>
      </section>
    );
  }

  return (
    <section aria-labelledby="page-title" className="conversation-view">
      <BackToResults />
      <h1 id="page-title">{conversation.title}</h1>
      <dl className="conversation-meta">
        <div>
          <dt>Owner</dt>
          <dd>
            <PersonName person={conversation.owner} />
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <time dateTime={conversation.createdAt}>{formatDateTime(conversation.createdAt)}</time>
          </dd>
        </div>
        <div>
          <dt>Last activity</dt>
          <dd>
            <time dateTime={conversation.updatedAt}>{formatDateTime(conversation.updatedAt)}</time>
          </dd>
        </div>
        <div>
          <dt>Messages</dt>
          <dd>{conversation.messageCount.toLocaleString()}</dd>
        </div>
      </dl>
      {error ? <ErrorMessage error={error} /> : null}

      <div role="status" className="hint">
        {searchingForTarget ? "Loading messages up to the linked one…" : null}
        {targetMessageId && !targetLoaded && !searchingForTarget && !loadingMore ? "The linked message is not in this conversation (it may have been deleted)." : null}
      </div>

      <ol className="messages" aria-label="Messages">
        {messages.map((message) => {
          const isTarget = message.id === targetMessageId;
          const tool = toolPayload(message.role, message.content);
          return (
            <li key={message.id}>
              <article
                id={`message-${message.id}`}
                className={`message message-${message.role.toLowerCase()}${isTarget ? " message-target" : ""}`}
                tabIndex={isTarget ? -1 : undefined}
                aria-current={isTarget ? "true" : undefined}
                aria-labelledby={`message-${message.id}-heading`}
              >
                <p className="message-heading" id={`message-${message.id}-heading`}>
                  <span className="message-role">{ROLE_LABELS[message.role] ?? message.role}</span>
                  {isTarget ? <span className="message-target-badge">Linked message</span> : null}
                  <time dateTime={message.createdAt}>{formatDateTime(message.createdAt)}</time>
                </p>
                <div className="message-text">
                  {tool ? (
                    <ToolMessage payload={tool} open={isTarget} terms={isTarget ? terms : null} />
                  ) : (
                    <MarkdownText text={message.content} terms={isTarget ? terms : null} headingOffset={1} />
                  )}
                </div>
              </article>
            </li>
          );
        })}
      </ol>

      {moreError ? <ErrorMessage error={moreError} /> : null}
      {pageInfo?.hasNextPage ? (
        <p>
          <button type="button" onClick={() => void loadMore()} disabled={loadingMore}>
            {loadingMore ? "Loading messages…" : `Load more messages (${messages.length} of ${conversation.messageCount} shown)`}
          </button>
        </p>
      ) : null}
    </section>
  );
}
