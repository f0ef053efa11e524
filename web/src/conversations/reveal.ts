/**
 * Brings the item a link named (`?message=` in a conversation, `?chunk=` in a document) into
 * view once it is rendered, and moves focus there so a screen reader starts reading at it
 * (the element carries tabIndex={-1}). Runs once per target, so later renders (a page of
 * messages loaded below it) do not pull the reader back.
 */
import { useEffect, useRef } from "react";

export function useRevealTarget(targetId: string | null, element: () => HTMLElement | null, rendered: boolean): void {
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
