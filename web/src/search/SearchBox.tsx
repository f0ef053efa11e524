/**
 * The search box: a labelled `<input type="search">` in a `role="search"` form, with suggestions
 * as you type (`searchSuggestions`, asked 150 ms after the last keystroke) in an ARIA 1.2
 * combobox: the input is the combobox, the suggestions a listbox it controls; ArrowDown/ArrowUp
 * move the active option (`aria-activedescendant`, focus stays in the box), Enter picks it (or
 * searches what was typed when none is active), Escape closes the list. Results follow the
 * typing too: `onType` gets what was typed once the typing rests (TYPE_SEARCH_DELAY_MS), so a
 * search runs without Enter, and not at every keystroke.
 */
import { useEffect, useId, useRef, useState } from "react";
import { useApolloClient } from "@apollo/client/react";
import { highlightPieces } from "../highlight-pieces";
import { SEARCH_SUGGESTIONS, type SearchSuggestion, type SuggestionSource } from "./operations";

const SUGGESTION_DELAY_MS = 150;
const SUGGESTION_LIMIT = 8;
/**
 * How long typing rests before its results are asked: longer than the gap between a typist's
 * keystrokes (about 100-200 ms), so a word typed in one go is one search, not one per letter.
 */
export const TYPE_SEARCH_DELAY_MS = 300;
/** Shorter text is not searched as it is typed (one letter matches everything). */
const TYPE_SEARCH_MIN_LENGTH = 2;

const SOURCE_LABELS: Record<SuggestionSource, string> = {
  MY_QUERY: "Your search",
  ORGANIZATION_QUERY: "Popular search",
  CONVERSATION_TITLE: "Conversation",
  DOCUMENT_NAME: "Document",
};

export interface SearchBoxProps {
  /** The query the page shows (from the URL): the box follows it on back/forward. */
  query: string;
  onSearch(query: string): void;
  /** What was typed, once typing rests: the page shows its results without a history entry per pause. */
  onType?(query: string): void;
}

export function SearchBox({ query, onSearch, onType }: SearchBoxProps) {
  const client = useApolloClient();
  const [draft, setDraft] = useState(query);
  const [suggestions, setSuggestions] = useState<SearchSuggestion[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  // The prefix the latest request was for: an answer to any other prefix is stale and dropped.
  const latestPrefix = useRef("");
  const inputId = useId();
  const listboxId = useId();
  const optionId = (index: number) => `${listboxId}-option-${index}`;

  // What onType last searched: when the page's query becomes it, the box already holds it, and
  // perhaps more typed since, which setting the draft back to the query would throw away.
  const typedSearch = useRef<string | null>(null);
  useEffect(() => {
    if (query === typedSearch.current) return;
    typedSearch.current = null;
    setDraft(query);
  }, [query]);
  const type = useRef(onType);
  type.current = onType;
  useEffect(() => {
    const text = draft.trim();
    if (!type.current || text.length < TYPE_SEARCH_MIN_LENGTH || text === query) return;
    const timer = window.setTimeout(() => {
      typedSearch.current = text;
      type.current?.(text);
    }, TYPE_SEARCH_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [draft, query]);

  function close() {
    setOpen(false);
    setActive(-1);
  }

  // Suggestions for what is typed, debounced; nothing is asked for an empty box.
  function requestSuggestions(value: string) {
    const prefix = value.trim();
    latestPrefix.current = prefix;
    if (!prefix) {
      setSuggestions([]);
      close();
    }
  }
  useEffect(() => {
    const prefix = draft.trim();
    if (!prefix || prefix === query) return;
    const timer = window.setTimeout(() => {
      client
        .query({ query: SEARCH_SUGGESTIONS, variables: { prefix, limit: SUGGESTION_LIMIT }, fetchPolicy: "cache-first", errorPolicy: "all" })
        .then((result) => {
          if (latestPrefix.current !== prefix) return;
          const found = result.data?.searchSuggestions ?? [];
          setSuggestions(found);
          setActive(-1);
          setOpen(found.length > 0);
        })
        // Suggestions are a help, not the search: a failed request leaves the box as it is.
        .catch(() => undefined);
    }, SUGGESTION_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [draft, query, client]);

  function pick(text: string) {
    latestPrefix.current = "";
    setDraft(text);
    close();
    onSearch(text);
  }

  function onKeyDown(event: React.KeyboardEvent<HTMLInputElement>) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!suggestions.length) return;
      event.preventDefault();
      if (!open) {
        setOpen(true);
        setActive(event.key === "ArrowDown" ? 0 : suggestions.length - 1);
        return;
      }
      const step = event.key === "ArrowDown" ? 1 : -1;
      // Wraps around: past the last option is the first, before the first the last.
      setActive((current) => (current < 0 ? (step > 0 ? 0 : suggestions.length - 1) : (current + step + suggestions.length) % suggestions.length));
    } else if (event.key === "Enter" && open && active >= 0 && suggestions[active]) {
      event.preventDefault();
      pick(suggestions[active].text);
    } else if (event.key === "Escape" && open) {
      event.preventDefault();
      close();
    }
  }

  const expanded = open && suggestions.length > 0;
  return (
    <form
      role="search"
      className="search-box"
      onSubmit={(event) => {
        event.preventDefault();
        const text = draft.trim();
        latestPrefix.current = "";
        close();
        if (text) onSearch(text);
      }}
    >
      <label htmlFor={inputId}>Search conversations, documents and more</label>
      <div className="search-box-row">
        <div className="search-combobox">
          <input
            id={inputId}
            type="search"
            role="combobox"
            aria-autocomplete="list"
            aria-expanded={expanded}
            aria-controls={listboxId}
            aria-activedescendant={expanded && active >= 0 ? optionId(active) : undefined}
            autoComplete="off"
            spellCheck={false}
            maxLength={1000}
            value={draft}
            onChange={(event) => {
              setDraft(event.target.value);
              requestSuggestions(event.target.value);
            }}
            onKeyDown={onKeyDown}
            onBlur={close}
          />
          <ul id={listboxId} role="listbox" aria-label="Suggestions" className="search-suggestions" hidden={!expanded}>
            {suggestions.map((suggestion, index) => (
              <li
                key={`${suggestion.source}:${suggestion.text}`}
                id={optionId(index)}
                role="option"
                aria-selected={index === active}
                className={index === active ? "active" : undefined}
                // mousedown, not click: the box must not lose focus (and close the list) first.
                onMouseDown={(event) => {
                  event.preventDefault();
                  pick(suggestion.text);
                }}
              >
                <span className="suggestion-text">
                  {/* What was typed stays plain and the completion is bold, as search boxes show it; unplaced, all plain. */}
                  {suggestion.matches.length
                    ? highlightPieces(suggestion.text, suggestion.matches).map((piece, pieceIndex) => (piece.matched ? <span key={pieceIndex}>{piece.text}</span> : <b key={pieceIndex}>{piece.text}</b>))
                    : suggestion.text}
                </span>
                <span className="suggestion-source">{SOURCE_LABELS[suggestion.source]}</span>
              </li>
            ))}
          </ul>
        </div>
        <button type="submit" className="primary">
          Search
        </button>
      </div>
    </form>
  );
}
