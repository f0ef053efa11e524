/**
 * "Save this search" on the search page. Placeholder until the saved-searches work builds it;
 * the search page renders it with the search as the page shows it.
 */
export interface SaveSearchButtonProps {
  query: string;
  alpha?: number | null;
}

export function SaveSearchButton(_props: SaveSearchButtonProps) {
  return null;
}
