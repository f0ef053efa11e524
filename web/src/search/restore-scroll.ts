/**
 * Coming back to the results from a hit (the browser's back, or "Back to results") finds the
 * list where it was left: the pages loaded are still in memory (useSearchResults keeps them per
 * search) and the scroll position is put back here. Each history entry keeps its own position
 * (sessionStorage, by React Router's location key), saved as the page is left.
 */
import { useEffect, useLayoutEffect, useRef } from "react";

const storageKey = (locationKey: string) => `search-scroll:${locationKey}`;

function readPosition(locationKey: string): number | null {
  try {
    const stored = sessionStorage.getItem(storageKey(locationKey));
    const position = stored === null ? NaN : Number(stored);
    return Number.isFinite(position) && position >= 0 ? position : null;
  } catch {
    return null;
  }
}

function savePosition(locationKey: string, position: number): void {
  try {
    sessionStorage.setItem(storageKey(locationKey), String(Math.round(position)));
  } catch {
    // Storage full or off (private mode): coming back starts at the top, as without this.
  }
}

/** Restores this history entry's scroll position once its results are shown; saves it when the entry is left. */
export function useRestoredScroll(locationKey: string, resultsShown: boolean): void {
  const restored = useRef<string | null>(null);
  useLayoutEffect(() => {
    if (!resultsShown || restored.current === locationKey) return;
    restored.current = locationKey;
    const position = readPosition(locationKey);
    if (position !== null && position > 0) window.scrollTo(0, position);
  }, [locationKey, resultsShown]);
  useEffect(() => {
    // Saved at every scroll (throttled by the frame): an unmount is too late, the next page has
    // already replaced the list and the position.
    let frame = 0;
    const onScroll = () => {
      if (frame) return;
      frame = window.requestAnimationFrame(() => {
        frame = 0;
        savePosition(locationKey, window.scrollY);
      });
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      window.removeEventListener("scroll", onScroll);
      if (frame) window.cancelAnimationFrame(frame);
    };
  }, [locationKey]);
}
