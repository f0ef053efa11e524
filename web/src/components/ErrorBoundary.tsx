import { Component, type ReactNode } from "react";
import { useLocation } from "react-router";
import { readableError } from "../errors";

/**
 * A page that throws while rendering shows what happened instead of a blank page. A page whose
 * script could not be loaded (the gateway went down before it was opened) reads as the service
 * unreachable; trying again reloads, because React keeps a lazy page's failed import for good.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override render() {
    if (this.state.error) {
      const readable = readableError(this.state.error);
      return (
        <div role="alert" className="error-box" data-error-code={readable.code}>
          <h2>{readable.action === "retry" ? readable.title : "This page failed"}</h2>
          <p>{readable.action === "retry" ? readable.detail : this.state.error.message}</p>
          <button type="button" onClick={() => (readable.action === "retry" ? window.location.reload() : this.setState({ error: null }))}>
            Try again
          </button>
        </div>
      );
    }
    return this.props.children;
  }
}

/**
 * The boundary around the routed page: a new path starts without the last page's failure. Only
 * this wrapper follows the location, so a change of search parameters does not re-render the
 * whole app (the page under it is the same element and is left to its own hooks).
 */
export function PageErrorBoundary({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  return <ErrorBoundary key={pathname}>{children}</ErrorBoundary>;
}
