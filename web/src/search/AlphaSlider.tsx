/**
 * For developers, in the search details: any mix of the search modes (SearchModeControl.tsx).
 * Alpha: the balance between keyword providers (weight alpha) and semantic ones (1 - alpha).
 * Until a person moves it, searches give no alpha and the deployment's default applies
 * (`searchIndexStatus.defaultAlpha`); the slider then shows that default. A moved slider
 * searches again once it rests (not at every step of a drag).
 */
import { useEffect, useId, useRef, useState } from "react";
import { useQuery } from "@apollo/client/react";
import { DEFAULT_ALPHA } from "./operations";

const SETTLE_MS = 350;

export function AlphaSlider({ alpha, onChange }: { alpha: number | null; onChange(alpha: number | null): void }) {
  const id = useId();
  const { data } = useQuery(DEFAULT_ALPHA, { errorPolicy: "all" });
  const defaultAlpha = data?.searchIndexStatus?.defaultAlpha.alpha ?? null;
  const [value, setValue] = useState<number | null>(alpha);
  useEffect(() => setValue(alpha), [alpha]);
  // The latest callback, so a page re-rendering (results streaming in) does not restart the wait.
  const report = useRef(onChange);
  report.current = onChange;
  useEffect(() => {
    if (value === alpha) return;
    const timer = window.setTimeout(() => report.current(value), SETTLE_MS);
    return () => window.clearTimeout(timer);
  }, [value, alpha]);

  const shown = value ?? defaultAlpha ?? 0.5;
  const description = value === null ? `default${defaultAlpha === null ? "" : ` (${defaultAlpha.toFixed(2)})`}` : value.toFixed(2);
  return (
    <div className="alpha-slider">
      <label htmlFor={id}>
        Custom mix, keyword weight (alpha): <output htmlFor={id}>{description}</output>
      </label>
      <div className="alpha-row">
        <span className="hint" aria-hidden="true">
          Meaning 0
        </span>
        <input
          id={id}
          type="range"
          min={0}
          max={1}
          step={0.05}
          value={shown}
          aria-valuetext={`${shown.toFixed(2)}: ${value === null ? "the default, " : ""}keyword weight ${shown.toFixed(2)}, semantic weight ${(1 - shown).toFixed(2)}`}
          onChange={(event) => setValue(Number(event.target.value))}
        />
        <span className="hint" aria-hidden="true">
          1 Keyword
        </span>
        {value !== null ? (
          <button type="button" onClick={() => setValue(null)}>
            Use the default
          </button>
        ) : null}
      </div>
    </div>
  );
}
