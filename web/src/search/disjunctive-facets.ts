/**
 * Facet counts that widen as well as narrow (disjunctive faceting within a group, conjunctive
 * across groups), as Algolia's helper computes them: a group with a selection is counted by the
 * same search without that group's selection, asked in one request beside the page (one aliased
 * `search` per such group, each selecting only its own facet; `@include` leaves out the groups
 * without a selection). A search without selections asks nothing more: the page's own counts are
 * already disjunctive then. Such a relaxed search is often the one the person ran before ticking,
 * which the result cache answers.
 */
import { gql, type TypedDocumentNode } from "@apollo/client";
import { skipToken, useQuery } from "@apollo/client/react";
import { useMemo } from "react";
import type { SearchFacets, SearchInput } from "./operations";
import { facetInputsOf, type FacetGroup, type UrlSearch } from "./search-url";

type Counts<Field extends keyof SearchFacets> = { facets: Pick<SearchFacets, Field> | null } | null;

interface WideningData {
  kinds?: Counts<"kinds">;
  providers?: Counts<"providers">;
  months?: Counts<"months">;
  categories?: Counts<"categories">;
  knowledgeBases?: Counts<"knowledgeBases">;
}

interface WideningVariables {
  kinds: SearchInput;
  withKinds: boolean;
  providers: SearchInput;
  withProviders: boolean;
  months: SearchInput;
  withMonths: boolean;
  categories: SearchInput;
  withCategories: boolean;
  knowledgeBases: SearchInput;
  withKnowledgeBases: boolean;
}

export const WIDENING_FACETS: TypedDocumentNode<WideningData, WideningVariables> = gql`
  query SearchPageWideningFacets(
    $kinds: SearchInput!
    $withKinds: Boolean!
    $providers: SearchInput!
    $withProviders: Boolean!
    $months: SearchInput!
    $withMonths: Boolean!
    $categories: SearchInput!
    $withCategories: Boolean!
    $knowledgeBases: SearchInput!
    $withKnowledgeBases: Boolean!
  ) {
    kinds: search(input: $kinds) @include(if: $withKinds) {
      facets {
        kinds {
          kind
          count
        }
      }
    }
    providers: search(input: $providers) @include(if: $withProviders) {
      facets {
        providers {
          provider
          count
        }
      }
    }
    months: search(input: $months) @include(if: $withMonths) {
      facets {
        months {
          month
          from
          to
          count
        }
      }
    }
    categories: search(input: $categories) @include(if: $withCategories) {
      facets {
        categories {
          value
          count
        }
      }
    }
    knowledgeBases: search(input: $knowledgeBases) @include(if: $withKnowledgeBases) {
      facets {
        knowledgeBases {
          value
          count
        }
      }
    }
  }
`;

/**
 * The facets to show for the page's search: the page's own counts, with each group that has a
 * selection replaced by its widened counts once they arrive (until then, the page's).
 */
export function useWideningFacets(search: UrlSearch | null, pageFacets: SearchFacets | null): SearchFacets | null {
  const inputs = useMemo(() => (search?.query ? facetInputsOf(search) : {}), [search]);
  const groups = Object.keys(inputs) as FacetGroup[];
  const variables = useMemo((): WideningVariables | null => {
    if (!groups.length) return null;
    // A group left out still needs a valid input for its variable; @include keeps it from running.
    const any = inputs[groups[0]!]!;
    return {
      kinds: inputs.kinds ?? any,
      withKinds: Boolean(inputs.kinds),
      providers: inputs.providers ?? any,
      withProviders: Boolean(inputs.providers),
      months: inputs.month ?? any,
      withMonths: Boolean(inputs.month),
      categories: inputs.categories ?? any,
      withCategories: Boolean(inputs.categories),
      knowledgeBases: inputs.knowledgeBases ?? any,
      withKnowledgeBases: Boolean(inputs.knowledgeBases),
    };
  }, [inputs]);
  const { data } = useQuery(WIDENING_FACETS, variables ? { variables, errorPolicy: "all" } : skipToken);
  return useMemo(() => {
    if (!pageFacets) return null;
    if (!variables || !data) return pageFacets;
    return {
      ...pageFacets,
      ...(data.kinds?.facets ? { kinds: data.kinds.facets.kinds } : {}),
      ...(data.providers?.facets ? { providers: data.providers.facets.providers } : {}),
      ...(data.months?.facets ? { months: data.months.facets.months } : {}),
      ...(data.categories?.facets ? { categories: data.categories.facets.categories } : {}),
      ...(data.knowledgeBases?.facets ? { knowledgeBases: data.knowledgeBases.facets.knowledgeBases } : {}),
    };
  }, [pageFacets, variables, data]);
}
