/**
 * Facet filters: what the results hold by type, source, creation month, category and knowledge
 * base, with counts, as checkboxes (a month is a radio button: `filter.created` is one range).
 * Within a group, ticking another value widens the search (values of a group are OR'ed, and the
 * group's counts are those of the search without its own selection: disjunctive-facets.ts);
 * across groups, selections narrow it. The counts are over the best candidates the page was cut
 * from (`SearchFacets.window`, said in the search details), not over everything.
 */
import { useId } from "react";
import { skipToken, useQuery } from "@apollo/client/react";
import { formatMonth } from "../dates";
import { KNOWLEDGE_BASE_NAMES, type SearchFacets, type SearchItemKind } from "./operations";
import { sourceLabel } from "./source-labels";
import type { ListFilter, SearchFilters } from "./search-url";

export const KIND_LABELS: Record<SearchItemKind, string> = {
  CONVERSATION: "Conversations",
  DOCUMENT_CHUNK: "Documents",
  KNOWLEDGE_BASE_PASSAGE: "Knowledge base passages",
  WEB_RESULT: "Web results",
  SLACK_MESSAGE: "Slack messages",
  LINKEDIN_POST: "LinkedIn posts",
};

export interface FacetSidebarProps {
  facets: SearchFacets | null;
  filters: SearchFilters;
  onToggle(filter: ListFilter, value: string, selected: boolean): void;
  onMonth(month: string | null): void;
  onClear(): void;
}

interface FacetOption {
  value: string;
  label: string;
  count: number | null;
}

/** The facet's values, with any selected value the filtered counts no longer list kept (so it can be unticked). */
function withSelected(options: FacetOption[], selected: readonly string[], label: (value: string) => string = (value) => value): FacetOption[] {
  const missing = selected.filter((value) => !options.some((option) => option.value === value));
  return [...options, ...missing.map((value) => ({ value, label: label(value), count: null }))];
}

function CheckboxFacet({ legend, options, selected, onToggle }: { legend: string; options: FacetOption[]; selected: readonly string[]; onToggle(value: string, selected: boolean): void }) {
  const id = useId();
  if (!options.length) return null;
  return (
    <fieldset className="facet">
      <legend>{legend}</legend>
      <ul>
        {options.map((option, index) => (
          <li key={option.value}>
            <input type="checkbox" id={`${id}-${index}`} checked={selected.includes(option.value)} onChange={(event) => onToggle(option.value, event.target.checked)} />
            <label htmlFor={`${id}-${index}`}>
              {option.label} {option.count !== null ? <span className="facet-count">({option.count})</span> : null}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}

export function FacetSidebar({ facets, filters, onToggle, onMonth, onClear }: FacetSidebarProps) {
  const id = useId();
  const anySelected = filters.kinds.length + filters.providers.length + filters.categories.length + filters.knowledgeBases.length > 0 || filters.month !== null;
  const kinds = withSelected(
    (facets?.kinds ?? []).map((facet) => ({ value: facet.kind, label: KIND_LABELS[facet.kind], count: facet.count })),
    filters.kinds,
    (value) => KIND_LABELS[value as SearchItemKind] ?? value,
  );
  const providers = withSelected((facets?.providers ?? []).map((facet) => ({ value: facet.provider, label: sourceLabel(facet.provider), count: facet.count })), filters.providers, sourceLabel);
  const categories = withSelected((facets?.categories ?? []).map((facet) => ({ value: facet.value, label: facet.value, count: facet.count })), filters.categories);
  // The facet counts knowledge bases by id: their names, when the caller may list them.
  const anyKnowledgeBase = (facets?.knowledgeBases.length ?? 0) + filters.knowledgeBases.length > 0;
  const { data: knowledgeBaseNames } = useQuery(KNOWLEDGE_BASE_NAMES, anyKnowledgeBase ? { errorPolicy: "all" } : skipToken);
  const knowledgeBaseName = (id: string) => knowledgeBaseNames?.knowledgeBases?.nodes.find((knowledgeBase) => knowledgeBase.id === id)?.name ?? id;
  const knowledgeBases = withSelected(
    (facets?.knowledgeBases ?? []).map((facet) => ({ value: facet.value, label: knowledgeBaseName(facet.value), count: facet.count })),
    filters.knowledgeBases,
    knowledgeBaseName,
  );
  const months = withSelected(
    (facets?.months ?? []).map((facet) => ({ value: facet.month, label: formatMonth(facet.month), count: facet.count })),
    filters.month ? [filters.month] : [],
    formatMonth,
  );

  return (
    <aside className="facets" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Filter results</h2>
      {facets ? null : <p className="hint">Counts appear with the results.</p>}
      {anySelected ? (
        <button type="button" onClick={onClear}>
          Clear filters
        </button>
      ) : null}
      <CheckboxFacet legend="Type" options={kinds} selected={filters.kinds} onToggle={(value, selected) => onToggle("kinds", value, selected)} />
      <CheckboxFacet legend="Source" options={providers} selected={filters.providers} onToggle={(value, selected) => onToggle("providers", value, selected)} />
      {months.length ? (
        <fieldset className="facet">
          <legend>Created</legend>
          <ul>
            <li>
              <input type="radio" id={`${id}-month-any`} name={`${id}-month`} checked={filters.month === null} onChange={() => onMonth(null)} />
              <label htmlFor={`${id}-month-any`}>Any month</label>
            </li>
            {months.map((option, index) => (
              <li key={option.value}>
                <input type="radio" id={`${id}-month-${index}`} name={`${id}-month`} checked={filters.month === option.value} onChange={() => onMonth(option.value)} />
                <label htmlFor={`${id}-month-${index}`}>
                  {option.label} {option.count !== null ? <span className="facet-count">({option.count})</span> : null}
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
      ) : null}
      <CheckboxFacet legend="Category" options={categories} selected={filters.categories} onToggle={(value, selected) => onToggle("categories", value, selected)} />
      <CheckboxFacet legend="Knowledge base" options={knowledgeBases} selected={filters.knowledgeBases} onToggle={(value, selected) => onToggle("knowledgeBases", value, selected)} />
    </aside>
  );
}
