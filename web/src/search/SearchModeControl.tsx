/**
 * The search mode as a choice of words ("Exact words", "Balanced", "By meaning") instead of an
 * alpha slider. The deployment's default mode is marked "recommended"; choosing it leaves the
 * alpha to the deployment. Shown only where the choice changes something: a deployment with no
 * semantic provider has one useful mode, and then no control. The exact alpha, and a slider for
 * any mix, are in the search details (SearchDetails.tsx).
 */
import { useEffect, useId, useState } from "react";
import { useQuery } from "@apollo/client/react";
import { DEFAULT_ALPHA } from "./operations";
import { alphaForMode, modeOfAlpha, SEARCH_MODES } from "./search-modes";

export function SearchModeControl({ alpha, onChange, meaningAvailable }: { alpha: number | null; onChange(alpha: number | null): void; meaningAvailable: boolean }) {
  const id = useId();
  const { data } = useQuery(DEFAULT_ALPHA, { errorPolicy: "all" });
  const defaultAlpha = data?.searchIndexStatus?.defaultAlpha.alpha ?? null;
  // The choice shows at once: the URL (and so `alpha`) follows in a React Router transition,
  // and until it lands the controlled radio would snap back to the old mode under the pointer.
  const [chosen, setChosen] = useState<{ alpha: number | null } | null>(null);
  useEffect(() => setChosen(null), [alpha]);
  if (!meaningAvailable) return null;
  const effective = (chosen ? chosen.alpha : alpha) ?? defaultAlpha;
  const current = effective === null ? null : modeOfAlpha(effective);
  const recommended = defaultAlpha === null ? null : modeOfAlpha(defaultAlpha);
  return (
    <fieldset className="search-modes">
      <legend>Match</legend>
      <div className="search-mode-options">
        {SEARCH_MODES.map((mode) => (
          <span key={mode.id} className="search-mode">
            <input
              type="radio"
              id={`${id}-${mode.id}`}
              name={`${id}-mode`}
              checked={current?.id === mode.id}
              aria-describedby={`${id}-${mode.id}-hint`}
              onChange={() => {
                const next = alphaForMode(mode, defaultAlpha);
                setChosen({ alpha: next });
                onChange(next);
              }}
            />
            <label htmlFor={`${id}-${mode.id}`}>
              {mode.label}
              {recommended?.id === mode.id ? <span className="search-mode-recommended"> (recommended)</span> : null}
            </label>
            <span id={`${id}-${mode.id}-hint`} className="visually-hidden">
              {mode.hint}
            </span>
          </span>
        ))}
        {current === null && effective !== null ? <span className="hint">Custom mix (see details)</span> : null}
      </div>
    </fieldset>
  );
}
