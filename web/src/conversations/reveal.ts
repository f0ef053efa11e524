/**
 * What a page does with an item a link names (`?message=` in a conversation, `?chunk=` in a
 * document) inside a paged list: loads further pages until the item is there, then brings it
 * into view and moves focus there so a screen reader starts reading at it (the element carries
 * tabIndex={-1}). The same hook keeps the list's "load more": one loader for the button and for
 * reaching the linked item.
 */
import { useEffect, useRef, useState } from "react";

/** Pages loaded on their own to reach a linked item at most (10,000 messages, 5,000 chunks). */
export const MAX_PAGES_TO_TARGET = 100;

export interface LinkedPagesOptions {
  /** The items loaded so far, in order. */
  nodes: readonly { id: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null } | undefined;
  /** The linked item's id, or null. */
  targetId: string | null;
  /** The element that shows an item (its DOM id). */
  elementId(id: string): string;
  /** Loads the page after `after` and joins it to the list (the page's own fetchMore). */
  fetchNext(after: string): Promise<unknown>;
  /** While true no page is loaded on its own (a document still being indexed). */
  paused?: boolean;
}

export interface LinkedPages {
  loadMore(): Promise<void>;
  loadingMore: boolean;
  moreError: unknown;
  /** The linked item is among the loaded ones. */
  targetLoaded: boolean;
  /** Pages are still being loaded to reach the linked item. */
  searchingForTarget: boolean;
}

export function useLinkedPages({ nodes, pageInfo, targetId, elementId, fetchNext, paused = false }: LinkedPagesOptions): LinkedPages {
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<unknown>(null);
  const pagesFetched = useRef(1);
  const targetLoaded = targetId !== null && nodes.some((node) => node.id === targetId);

  async function loadMore() {
    if (!pageInfo?.endCursor || loadingMore) return;
    setLoadingMore(true);
    setMoreError(null);
    try {
      pagesFetched.current += 1;
      await fetchNext(pageInfo.endCursor);
    } catch (caught) {
      setMoreError(caught);
    } finally {
      setLoadingMore(false);
    }
  }

  // A linked item further on than the first page: load pages until it is there.
  useEffect(() => {
    if (targetId && !targetLoaded && pageInfo?.hasNextPage && !paused && !loadingMore && !moreError && pagesFetched.current < MAX_PAGES_TO_TARGET) void loadMore();
  });

  useRevealTarget(targetId, () => (targetId ? document.getElementById(elementId(targetId)) : null), targetLoaded);

  return {
    loadMore,
    loadingMore,
    moreError,
    targetLoaded,
    searchingForTarget: targetId !== null && !targetLoaded && (pageInfo?.hasNextPage ?? false) && !moreError,
  };
}

/** Scrolls to and focuses the linked item once it is rendered; once per target, so later renders (a page loaded below it) do not pull the reader back. */
function useRevealTarget(targetId: string | null, element: () => HTMLElement | null, rendered: boolean): void {
  const revealed = useRef<string | null>(null);
  useEffect(() => {
    if (!targetId || !rendered || revealed.current === targetId) return;
    const target = element();
    if (!target) return;
    revealed.current = targetId;
    target.scrollIntoView({ block: "center" });
    target.focus({ preventScroll: true });
  });
}
