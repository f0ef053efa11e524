/**
 * The words typo tolerance searched besides a query's misspelled ones (`SearchResult.corrections`),
 * in words: "Also searched: deadlock for “deadlok”". The search page and a saved search's run
 * both say it, each with what it offers next.
 */
export interface QueryCorrection {
  word: string;
  searchedAs: string[];
}

export function AlsoSearched({ corrections }: { corrections: readonly QueryCorrection[] }) {
  return (
    <>
      Also searched:{" "}
      {corrections.map((correction, index) => (
        <span key={correction.word}>
          {index > 0 ? "; " : ""}
          <strong>{correction.searchedAs.join(", ")}</strong> for “{correction.word}”
        </span>
      ))}
      .
    </>
  );
}
