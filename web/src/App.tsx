/**
 * The shell: a skip link, the navigation, the token control, and the pages. Search is in the
 * main chunk (it is the page most visits open); every other page is loaded when first opened.
 */
import { lazy, Suspense } from "react";
import { NavLink, Route, Routes } from "react-router";
import { SearchPage } from "./pages/SearchPage";
import { TokenControl } from "./components/TokenControl";
import { PageErrorBoundary } from "./components/ErrorBoundary";

const ConversationPage = lazy(() => import("./pages/ConversationPage"));
const DocumentsPage = lazy(() => import("./pages/DocumentsPage"));
const DocumentPage = lazy(() => import("./pages/DocumentPage"));
const SavedSearchesPage = lazy(() => import("./pages/SavedSearchesPage"));
const CreditsPage = lazy(() => import("./pages/CreditsPage"));
const AnalyticsPage = lazy(() => import("./pages/AnalyticsPage"));

const NAVIGATION = [
  { to: "/", label: "Search", end: true },
  { to: "/documents", label: "Documents" },
  { to: "/saved", label: "Saved searches" },
  { to: "/credits", label: "Credits" },
  { to: "/analytics", label: "Analytics" },
];

export function App() {
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <a className="brand" href="/">
          Context search
        </a>
        <nav aria-label="Main">
          <ul>
            {NAVIGATION.map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} end={item.end}>
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <TokenControl />
      </header>
      <main id="main" tabIndex={-1}>
        <PageErrorBoundary>
          <Suspense fallback={<p role="status">Loading…</p>}>
            <Routes>
              <Route path="/" element={<SearchPage />} />
              <Route path="/conversations/:id" element={<ConversationPage />} />
              <Route path="/documents" element={<DocumentsPage />} />
              <Route path="/documents/:id" element={<DocumentPage />} />
              <Route path="/saved" element={<SavedSearchesPage />} />
              <Route path="/credits" element={<CreditsPage />} />
              <Route path="/analytics" element={<AnalyticsPage />} />
              <Route path="*" element={<NotFound />} />
            </Routes>
          </Suspense>
        </PageErrorBoundary>
      </main>
      <footer className="app-footer">
        <a href="/graphql">GraphQL API and GraphiQL</a>
      </footer>
    </>
  );
}

function NotFound() {
  return (
    <section aria-labelledby="not-found">
      <h1 id="not-found">Page not found</h1>
      <p>
        <a href="/">Go to search</a>
      </p>
    </section>
  );
}
