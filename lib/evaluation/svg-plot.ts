/**
 * Line charts as standalone SVG for evaluation reports: nDCG@10 against the fusion weight alpha,
 * latency against corpus size. The output has no scripts, no external fonts or stylesheets and
 * only presentation attributes (no <style>), so it renders the same on GitHub, in browsers and
 * in librsvg/Inkscape converters. Layout is computed here because SVG cannot measure text; text
 * widths are estimated from typical sans-serif glyph widths, with slack to spare.
 */

export type AxisScale = "linear" | "log";

export interface PlotPoint {
  x: number;
  y: number;
}

export interface PlotSeries {
  name: string;
  points: readonly PlotPoint[];
  /** Drawn dashed, without markers or value labels: for baselines and published reference numbers. */
  dashed?: boolean;
  /** Any SVG colour; defaults to the next colour of a colour-blind-safe palette. */
  color?: string;
}

/** A horizontal line across the whole plot, labelled inside it (e.g. "BM25 published 0.665"). */
export interface ReferenceLine {
  y: number;
  label: string;
  color?: string;
}

export interface LinePlotOptions {
  title: string;
  subtitle?: string;
  xLabel: string;
  yLabel: string;
  series: readonly PlotSeries[];
  referenceLines?: readonly ReferenceLine[];
  /** Fixed axis ranges; by default the data (and reference lines) rounded out to nice numbers. */
  xDomain?: readonly [number, number];
  yDomain?: readonly [number, number];
  xScale?: AxisScale;
  yScale?: AxisScale;
  width?: number;
  height?: number;
  /**
   * Label each point with its y value. By default: on solid series of at most 12 points, when
   * at most 3 solid series are drawn (more intertwined lines make labels a pile).
   */
  valueLabels?: boolean;
  formatX?: (value: number) => string;
  formatY?: (value: number) => string;
  formatValue?: (value: number) => string;
}

/** Tableau 10: distinguishable for common colour-vision deficiencies and in greyscale print. */
const PALETTE = ["#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"];
const FONT = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, Arial, sans-serif";
const INK = { title: "#111827", text: "#374151", muted: "#6b7280", axis: "#9ca3af", grid: "#e5e7eb", minorGrid: "#f3f4f6" };
const SIZE = { title: 18, subtitle: 13, axisLabel: 13, tick: 12, legend: 12.5, value: 11 };
const AUTO_LABEL_MAX_POINTS = 12;
const AUTO_LABEL_MAX_SERIES = 3;
const MARKER_MAX_POINTS = 40;

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

interface Tick {
  value: number;
  label: string;
  /** Minor ticks get a faint grid line and no label. */
  minor?: boolean;
}

export function renderLinePlot(options: LinePlotOptions): string {
  const width = options.width ?? 760;
  const height = options.height ?? 460;
  if (!(width >= 200 && height >= 150)) throw new RangeError(`plot size must be at least 200×150, got ${width}×${height}`);
  const xKind = options.xScale ?? "linear";
  const yKind = options.yScale ?? "linear";
  const references = options.referenceLines ?? [];
  validateData(options.series, references, xKind, yKind);

  const allPoints = options.series.flatMap((series) => series.points);
  const xDomain = resolveDomain(options.xDomain, allPoints.map((point) => point.x), xKind, "x");
  const yDomain = resolveDomain(
    options.yDomain,
    [...allPoints.map((point) => point.y), ...references.map((line) => line.y)],
    yKind,
    "y",
  );

  // Vertical layout: header, legend, plot, tick labels, x-axis label.
  const pad = 20;
  let cursor = pad + SIZE.title;
  const titleBaseline = cursor;
  let subtitleBaseline: number | undefined;
  if (options.subtitle) {
    cursor += 8 + SIZE.subtitle;
    subtitleBaseline = cursor;
  }
  const colors = options.series.map((series, index) => series.color ?? PALETTE[index % PALETTE.length] ?? "#4e79a7");

  const yTickCountGuess = Math.max(3, Math.round((height - 160) / 48));
  const provisionalYTicks = buildTicks(yDomain, yKind, yTickCountGuess, options.formatY);
  const yTickWidth = Math.max(0, ...provisionalYTicks.filter((tick) => !tick.minor).map((tick) => textWidth(tick.label, SIZE.tick)));
  const plotLeft = pad + SIZE.axisLabel + 12 + yTickWidth + 8;
  const plotRightLimit = width - pad;

  const legend = layoutLegend(options.series, colors, pad, plotRightLimit, cursor + 12 + SIZE.legend);
  cursor = legend.bottom + (legend.items.length > 0 ? 14 : 4);
  const plotTop = cursor;
  const plotBottom = height - pad - SIZE.axisLabel - 10 - SIZE.tick - 8;
  if (plotBottom - plotTop < 60) throw new RangeError("plot is too small for its title and legend; increase height");

  const xTicksProvisional = buildTicks(xDomain, xKind, Math.max(3, Math.round((plotRightLimit - plotLeft) / 80)), options.formatX);
  const lastXLabel = [...xTicksProvisional].reverse().find((tick) => !tick.minor)?.label ?? "";
  const plotRight = plotRightLimit - Math.max(0, textWidth(lastXLabel, SIZE.tick) / 2 - 12);
  const plot: Box = { left: plotLeft, top: plotTop, right: plotRight, bottom: plotBottom };

  const xTicks = buildTicks(xDomain, xKind, Math.max(3, Math.round((plot.right - plot.left) / 80)), options.formatX);
  const yTicks = buildTicks(yDomain, yKind, Math.max(3, Math.round((plot.bottom - plot.top) / 48)), options.formatY);
  const xOf = scale(xDomain, [plot.left, plot.right], xKind);
  const yOf = scale(yDomain, [plot.bottom, plot.top], yKind);

  const id = `plot-${hash(JSON.stringify([options.title, options.series.map((series) => series.name)]))}`;
  const out: string[] = [];
  out.push(`<?xml version="1.0" encoding="UTF-8"?>`);
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-title" font-family="${FONT}">`,
  );
  out.push(`<title id="${id}-title">${escapeXml(options.title)}</title>`);
  out.push(`<desc>${escapeXml(describe(options))}</desc>`);
  out.push(`<defs><clipPath id="${id}-clip"><rect x="${n(plot.left)}" y="${n(plot.top - 1)}" width="${n(plot.right - plot.left)}" height="${n(plot.bottom - plot.top + 2)}"/></clipPath></defs>`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);

  out.push(text(pad, titleBaseline, options.title, { size: SIZE.title, weight: 600, fill: INK.title }));
  if (options.subtitle && subtitleBaseline !== undefined) {
    out.push(text(pad, subtitleBaseline, options.subtitle, { size: SIZE.subtitle, fill: INK.muted }));
  }

  // Grid first, so data draws over it.
  out.push(`<g shape-rendering="crispEdges">`);
  for (const tick of yTicks) {
    const y = yOf(tick.value);
    out.push(line(plot.left, y, plot.right, y, tick.minor ? INK.minorGrid : INK.grid));
  }
  for (const tick of xTicks) {
    const x = xOf(tick.value);
    out.push(line(x, plot.top, x, plot.bottom, tick.minor ? INK.minorGrid : INK.grid));
  }
  out.push(line(plot.left, plot.bottom, plot.right, plot.bottom, INK.axis));
  out.push(line(plot.left, plot.top, plot.left, plot.bottom, INK.axis));
  for (const tick of xTicks.filter((t) => !t.minor)) out.push(line(xOf(tick.value), plot.bottom, xOf(tick.value), plot.bottom + 5, INK.axis));
  for (const tick of yTicks.filter((t) => !t.minor)) out.push(line(plot.left - 5, yOf(tick.value), plot.left, yOf(tick.value), INK.axis));
  out.push(`</g>`);

  out.push(`<g font-size="${SIZE.tick}" fill="${INK.text}">`);
  for (const tick of thinLabels(xTicks.filter((t) => !t.minor), xOf)) {
    out.push(`<text class="tick-label x" x="${n(xOf(tick.value))}" y="${n(plot.bottom + 8 + SIZE.tick)}" text-anchor="middle">${escapeXml(tick.label)}</text>`);
  }
  for (const tick of yTicks.filter((t) => !t.minor)) {
    out.push(`<text class="tick-label y" x="${n(plot.left - 9)}" y="${n(yOf(tick.value) + SIZE.tick * 0.35)}" text-anchor="end">${escapeXml(tick.label)}</text>`);
  }
  out.push(`</g>`);

  out.push(text((plot.left + plot.right) / 2, height - pad, options.xLabel, { size: SIZE.axisLabel, fill: INK.text, anchor: "middle" }));
  const yLabelX = pad + SIZE.axisLabel - 2;
  const yLabelY = (plot.top + plot.bottom) / 2;
  out.push(
    `<text x="${n(yLabelX)}" y="${n(yLabelY)}" font-size="${SIZE.axisLabel}" fill="${INK.text}" text-anchor="middle" transform="rotate(-90 ${n(yLabelX)} ${n(yLabelY)})">${escapeXml(options.yLabel)}</text>`,
  );

  // Data, in screen coordinates, clipped to what the domains show.
  const drawn = options.series.map((series, index) => ({
    series,
    color: colors[index] ?? "#4e79a7",
    points: [...series.points].sort((a, b) => a.x - b.x).map((point) => ({ point, px: xOf(point.x), py: yOf(point.y) })),
  }));
  const visible = (px: number, py: number) => px >= plot.left - 0.5 && px <= plot.right + 0.5 && py >= plot.top - 0.5 && py <= plot.bottom + 0.5;

  // Obstacles for label placement: every line segment and marker drawn in the plot.
  const segments: [number, number, number, number][] = [];
  const obstacles: Box[] = [];

  out.push(`<g clip-path="url(#${id}-clip)" fill="none" stroke-linejoin="round" stroke-linecap="round">`);
  for (const reference of references) {
    const y = yOf(reference.y);
    segments.push([plot.left, y, plot.right, y]);
    out.push(`<line x1="${n(plot.left)}" y1="${n(y)}" x2="${n(plot.right)}" y2="${n(y)}" stroke="${escapeXml(reference.color ?? INK.muted)}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  }
  for (const { series, color, points } of drawn) {
    if (points.length === 0) continue;
    for (let i = 1; i < points.length; i++) {
      const a = points[i - 1]!;
      const b = points[i]!;
      segments.push([a.px, a.py, b.px, b.py]);
    }
    const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${n(p.px)} ${n(p.py)}`).join(" ");
    const dash = series.dashed ? ` stroke-dasharray="7 5"` : "";
    out.push(`<path d="${d}" stroke="${escapeXml(color)}" stroke-width="${series.dashed ? 1.75 : 2.25}"${dash}/>`);
  }
  out.push(`</g>`);

  const markerSeries = drawn.filter(({ series, points }) => !series.dashed && points.length <= MARKER_MAX_POINTS);
  out.push(`<g stroke="#ffffff" stroke-width="1.5">`);
  for (const { color, points } of markerSeries) {
    for (const { px, py } of points) {
      if (!visible(px, py)) continue;
      obstacles.push({ left: px - 4.5, top: py - 4.5, right: px + 4.5, bottom: py + 4.5 });
      out.push(`<circle cx="${n(px)}" cy="${n(py)}" r="4" fill="${escapeXml(color)}"/>`);
    }
  }
  out.push(`</g>`);

  // Labels go where they collide with nothing, else where they only cross a line (their white
  // halo keeps them legible), else nowhere: a missing label beats an unreadable pile.
  const labels: string[] = [];
  const placeLabel = (candidates: { x: number; y: number; anchor: "start" | "middle" | "end" }[], label: string, size: number) => {
    let best: { x: number; y: number; anchor: "start" | "middle" | "end"; box: Box; hits: number } | undefined;
    for (const candidate of candidates) {
      const box = textBox(candidate.x, candidate.y, label, size, candidate.anchor);
      if (!inside(box, plot) || obstacles.some((other) => overlaps(box, other))) continue;
      const hits = segments.filter((segment) => segmentHitsBox(segment, box)).length;
      if (!best || hits < best.hits) best = { ...candidate, box, hits };
      if (hits === 0) break;
    }
    if (best) obstacles.push(best.box);
    return best;
  };

  for (const reference of references) {
    const y = yOf(reference.y);
    if (y < plot.top || y > plot.bottom) continue;
    const placed = placeLabel(
      [
        { x: plot.right - 8, y: y - 6, anchor: "end" },
        { x: plot.right - 8, y: y + 6 + SIZE.value, anchor: "end" },
        { x: plot.left + 8, y: y - 6, anchor: "start" },
        { x: plot.left + 8, y: y + 6 + SIZE.value, anchor: "start" },
      ],
      reference.label,
      SIZE.value,
    );
    if (placed) labels.push(haloText(placed.x, placed.y, reference.label, SIZE.value, reference.color ?? INK.muted, placed.anchor, "reference-label"));
  }

  const formatValue = options.formatValue ?? formatValueDefault;
  for (const { color, points } of markerSeries) {
    const wanted = options.valueLabels ?? (points.length <= AUTO_LABEL_MAX_POINTS && markerSeries.length <= AUTO_LABEL_MAX_SERIES);
    if (!wanted) continue;
    points.forEach(({ point, px, py }, i) => {
      if (!visible(px, py)) return;
      const label = formatValue(point.y);
      // A peak reads best labelled above, a trough below.
      const neighbours = [points[i - 1]?.py, points[i + 1]?.py].filter((v): v is number => v !== undefined);
      const trough = neighbours.length > 0 && neighbours.every((v) => v < py - 0.5);
      const above = { x: px, y: py - 9, anchor: "middle" as const };
      const below = { x: px, y: py + 9 + SIZE.value, anchor: "middle" as const };
      const placed = placeLabel(
        [
          ...(trough ? [below, above] : [above, below]),
          // Diagonals fit at the plot's edges and beside steep lines.
          { x: px - 5, y: py - 7, anchor: "end" },
          { x: px + 5, y: py - 7, anchor: "start" },
          { x: px + 5, y: py + 7 + SIZE.value * 0.8, anchor: "start" },
          { x: px - 5, y: py + 7 + SIZE.value * 0.8, anchor: "end" },
          { x: px + 8, y: py + SIZE.value * 0.35, anchor: "start" },
          { x: px - 8, y: py + SIZE.value * 0.35, anchor: "end" },
        ],
        label,
        SIZE.value,
      );
      if (placed) labels.push(haloText(placed.x, placed.y, label, SIZE.value, darken(color), placed.anchor, "value-label"));
    });
  }
  out.push(`<g font-size="${SIZE.value}">`, ...labels, `</g>`);

  if (legend.items.length > 0) {
    out.push(`<g class="legend" font-size="${SIZE.legend}" fill="${INK.text}">`);
    for (const item of legend.items) {
      const midY = item.y - SIZE.legend * 0.35;
      const dash = item.dashed ? ` stroke-dasharray="5 3"` : "";
      out.push(`<line x1="${n(item.x)}" y1="${n(midY)}" x2="${n(item.x + 22)}" y2="${n(midY)}" stroke="${escapeXml(item.color)}" stroke-width="2.25"${dash}/>`);
      if (!item.dashed) out.push(`<circle cx="${n(item.x + 11)}" cy="${n(midY)}" r="3.5" fill="${escapeXml(item.color)}" stroke="#ffffff" stroke-width="1.25"/>`);
      out.push(`<text x="${n(item.x + 28)}" y="${n(item.y)}">${escapeXml(item.name)}</text>`);
    }
    out.push(`</g>`);
  }

  out.push(`</svg>`);
  return out.join("\n") + "\n";
}

// ---------------------------------------------------------------------------------------------
// Scales and ticks

/** A step of 1, 2 or 5 times a power of ten giving about `count` intervals over the span (as d3). */
export function niceStep(span: number, count: number): number {
  const raw = Math.abs(span) / Math.max(1, count);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const error = raw / power;
  const factor = error >= Math.sqrt(50) ? 10 : error >= Math.sqrt(10) ? 5 : error >= Math.sqrt(2) ? 2 : 1;
  return factor * power;
}

/** Tick values at multiples of a nice step inside [min, max]. */
export function linearTicks(min: number, max: number, count: number): number[] {
  const step = niceStep(max - min, count);
  const first = Math.ceil(min / step - 1e-9);
  const last = Math.floor(max / step + 1e-9);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(clean(i * step));
  return ticks;
}

/**
 * Powers of ten inside [min, max]; over less than two decades those alone are too sparse to
 * read values from, so 2× and 5× multiples are added.
 */
export function logTicks(min: number, max: number): number[] {
  const from = Math.floor(Math.log10(min) + 1e-9);
  const to = Math.ceil(Math.log10(max) - 1e-9);
  const within = (value: number) => value >= min * (1 - 1e-9) && value <= max * (1 + 1e-9);
  const powers: number[] = [];
  for (let e = from; e <= to; e++) if (within(10 ** e)) powers.push(clean(10 ** e));
  if (powers.length >= 3) return powers;
  const dense: number[] = [];
  for (let e = from - 1; e <= to; e++) for (const m of [1, 2, 5]) if (within(m * 10 ** e)) dense.push(clean(m * 10 ** e));
  return dense;
}

function buildTicks(domain: [number, number], kind: AxisScale, count: number, format?: (value: number) => string): Tick[] {
  if (kind === "log") {
    const values = logTicks(domain[0], domain[1]);
    const labelled = values.map((value) => ({ value, label: format ? format(value) : formatCompact(value) }));
    // Unlabelled 2..9 multiples show the log spacing when only powers of ten are labelled.
    const minors: Tick[] = [];
    if (values.every((value) => isPowerOfTen(value))) {
      const from = Math.floor(Math.log10(domain[0]));
      const to = Math.ceil(Math.log10(domain[1]));
      for (let e = from; e < to; e++) {
        for (let m = 2; m <= 9; m++) {
          const value = m * 10 ** e;
          if (value > domain[0] && value < domain[1]) minors.push({ value, label: "", minor: true });
        }
      }
    }
    return [...minors, ...labelled];
  }
  const values = linearTicks(domain[0], domain[1], count);
  const step = values.length > 1 ? (values[1] ?? 0) - (values[0] ?? 0) : niceStep(domain[1] - domain[0], count);
  return values.map((value) => ({ value, label: format ? format(value) : formatTick(value, step) }));
}

function resolveDomain(fixed: readonly [number, number] | undefined, values: number[], kind: AxisScale, axis: "x" | "y"): [number, number] {
  if (fixed) {
    const [low, high] = fixed;
    if (!Number.isFinite(low) || !Number.isFinite(high) || !(high > low)) {
      throw new RangeError(`${axis}Domain must be two finite numbers, low < high; got [${low}, ${high}]`);
    }
    if (kind === "log" && low <= 0) throw new RangeError(`${axis}Domain must be positive on a log scale; got [${low}, ${high}]`);
    return [low, high];
  }
  if (values.length === 0) return kind === "log" ? [1, 10] : [0, 1];
  let low = Math.min(...values);
  let high = Math.max(...values);
  if (kind === "log") {
    if (low === high) [low, high] = [low / 2, high * 2];
    return [niceLogFloor(low), niceLogCeil(high)];
  }
  if (low === high) {
    const spread = low === 0 ? 1 : Math.abs(low) * 0.1;
    [low, high] = [low - spread, high + spread];
  }
  // The y axis gets headroom so labels above the highest point and below the lowest fit;
  // x values (alpha 0..1, corpus sizes) are usually already round and should end the axis.
  if (axis === "y") {
    const headroom = (high - low) * 0.06;
    const crossesZero = low >= 0 && low - headroom < 0;
    low = crossesZero ? 0 : low - headroom;
    high += headroom;
  }
  const step = niceStep(high - low, 6);
  return [clean(Math.floor(low / step + 1e-9) * step), clean(Math.ceil(high / step - 1e-9) * step)];
}

function niceLogFloor(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  const m = [5, 2, 1].find((factor) => factor * power <= value * (1 + 1e-9)) ?? 1;
  return clean(m * power);
}

function niceLogCeil(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  const m = [1, 2, 5, 10].find((factor) => factor * power >= value * (1 - 1e-9)) ?? 10;
  return clean(m * power);
}

function scale(domain: [number, number], range: [number, number], kind: AxisScale): (value: number) => number {
  const transform = kind === "log" ? Math.log10 : (value: number) => value;
  const d0 = transform(domain[0]);
  const d1 = transform(domain[1]);
  return (value) => range[0] + ((transform(value) - d0) / (d1 - d0)) * (range[1] - range[0]);
}

// ---------------------------------------------------------------------------------------------
// Number formatting

function formatTick(value: number, step: number): string {
  const magnitude = Math.abs(value);
  if (magnitude >= 10_000 || (magnitude > 0 && step >= 10_000)) return formatCompact(value);
  return withMinus(
    new Intl.NumberFormat("en-US", { minimumFractionDigits: decimalsOf(step), maximumFractionDigits: decimalsOf(step) }).format(Math.abs(value)),
    value,
  );
}

/** 1, 10, 100, 1k, 10k, 1.5M: corpus sizes and latencies read better short. */
function formatCompact(value: number): string {
  const magnitude = Math.abs(value);
  const units: [number, string][] = [
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "k"],
  ];
  for (const [unit, suffix] of units) {
    if (magnitude >= unit) return withMinus(`${trimNumber(magnitude / unit)}${suffix}`, value);
  }
  return withMinus(trimNumber(magnitude), value);
}

function formatValueDefault(value: number): string {
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return withMinus(new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }).format(magnitude), value);
  // Three significant digits keep "0.665" and "0.700" the same width across one series.
  return withMinus(magnitude.toPrecision(3), value);
}

function trimNumber(value: number): string {
  return String(Number(value.toPrecision(4)));
}

function decimalsOf(step: number): number {
  for (let decimals = 0; decimals <= 12; decimals++) {
    const scaled = step * 10 ** decimals;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6) return decimals;
  }
  return 12;
}

/** A true minus sign (U+2212) is as wide as a digit, so negative tick labels align. */
function withMinus(text: string, value: number): string {
  return value < 0 && !Object.is(value, -0) ? `\u2212${text}` : text;
}

function isPowerOfTen(value: number): boolean {
  const exponent = Math.log10(value);
  return Math.abs(exponent - Math.round(exponent)) < 1e-9;
}

/** Removes binary floating-point noise such as 0.30000000000000004. */
function clean(value: number): number {
  return Number(value.toPrecision(12));
}

// ---------------------------------------------------------------------------------------------
// Text and geometry

/** Approximate advance widths of a sans-serif face, in ems; over-estimating is the safe side. */
export function textWidth(content: string, size: number): number {
  let ems = 0;
  for (const char of content) {
    if ("il.,:;'|!Ijtf()[] ".includes(char)) ems += 0.3;
    else if ("mwMW@%".includes(char)) ems += 0.88;
    else if (/[A-Z]/.test(char)) ems += 0.68;
    else ems += 0.57;
  }
  return ems * size;
}

function textBox(x: number, baseline: number, content: string, size: number, anchor: "start" | "middle" | "end"): Box {
  const width = textWidth(content, size);
  const left = anchor === "start" ? x : anchor === "middle" ? x - width / 2 : x - width;
  return { left: left - 2, right: left + width + 2, top: baseline - size * 0.8, bottom: baseline + size * 0.25 };
}

function inside(box: Box, bounds: Box): boolean {
  return box.left >= bounds.left + 1 && box.right <= bounds.right - 1 && box.top >= bounds.top + 1 && box.bottom <= bounds.bottom - 1;
}

function overlaps(a: Box, b: Box): boolean {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

/** Liang–Barsky clipping: does the segment pass through the box? */
function segmentHitsBox([x1, y1, x2, y2]: [number, number, number, number], box: Box): boolean {
  const dx = x2 - x1;
  const dy = y2 - y1;
  let t0 = 0;
  let t1 = 1;
  const edges: [number, number][] = [
    [-dx, x1 - box.left],
    [dx, box.right - x1],
    [-dy, y1 - box.top],
    [dy, box.bottom - y1],
  ];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

interface LegendItem {
  name: string;
  color: string;
  dashed: boolean;
  x: number;
  y: number;
}

function layoutLegend(series: readonly PlotSeries[], colors: string[], left: number, right: number, firstBaseline: number) {
  const items: LegendItem[] = [];
  let x = left;
  let y = firstBaseline;
  series.forEach((entry, index) => {
    const itemWidth = 28 + textWidth(entry.name, SIZE.legend);
    if (x > left && x + itemWidth > right) {
      x = left;
      y += SIZE.legend + 8;
    }
    items.push({ name: entry.name, color: colors[index] ?? "#4e79a7", dashed: entry.dashed ?? false, x, y });
    x += itemWidth + 22;
  });
  return { items, bottom: items.length > 0 ? y + SIZE.legend * 0.3 : firstBaseline - 14 };
}

/** Drops every other x tick label until the estimated labels no longer touch. */
function thinLabels(ticks: Tick[], xOf: (value: number) => number): Tick[] {
  for (let every = 1; every <= ticks.length; every++) {
    const kept = ticks.filter((_, index) => index % every === 0);
    const clear = kept.every((tick, index) => {
      const next = kept[index + 1];
      if (!next) return true;
      const gap = xOf(next.value) - xOf(tick.value);
      return gap > (textWidth(tick.label, SIZE.tick) + textWidth(next.label, SIZE.tick)) / 2 + 8;
    });
    if (clear) return kept;
  }
  return ticks.slice(0, 1);
}

function text(
  x: number,
  y: number,
  content: string,
  style: { size: number; fill: string; weight?: number; anchor?: "start" | "middle" | "end" },
): string {
  const weight = style.weight ? ` font-weight="${style.weight}"` : "";
  const anchor = style.anchor && style.anchor !== "start" ? ` text-anchor="${style.anchor}"` : "";
  return `<text x="${n(x)}" y="${n(y)}" font-size="${style.size}" fill="${style.fill}"${weight}${anchor}>${escapeXml(content)}</text>`;
}

function haloText(x: number, y: number, content: string, size: number, fill: string, anchor: string, className: string): string {
  return `<text class="${className}" x="${n(x)}" y="${n(y)}" font-size="${size}" fill="${escapeXml(fill)}" text-anchor="${anchor}" stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke">${escapeXml(content)}</text>`;
}

function line(x1: number, y1: number, x2: number, y2: number, stroke: string): string {
  return `<line x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${stroke}" stroke-width="1"/>`;
}

/** Value labels in a darker shade of their series colour read better on white than the line colour. */
function darken(color: string): string {
  const match = /^#([0-9a-f]{6})$/i.exec(color);
  if (!match?.[1]) return color;
  const channel = (offset: number) =>
    Math.round(parseInt(match[1]!.slice(offset, offset + 2), 16) * 0.72)
      .toString(16)
      .padStart(2, "0");
  return `#${channel(0)}${channel(2)}${channel(4)}`;
}

export function escapeXml(content: string): string {
  return content
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
    // Control characters other than tab and newline are not allowed in XML 1.0 at all.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");
}

function n(value: number): string {
  return String(Math.round(value * 100) / 100);
}

function hash(content: string): string {
  let h = 5381;
  for (let i = 0; i < content.length; i++) h = ((h * 33) ^ content.charCodeAt(i)) >>> 0;
  return h.toString(36);
}

function describe(options: LinePlotOptions): string {
  const series = options.series.map((entry) => `${entry.name} (${entry.points.length} points)`).join("; ");
  return `${options.yLabel} against ${options.xLabel}. Series: ${series || "none"}.`;
}

function validateData(series: readonly PlotSeries[], references: readonly ReferenceLine[], xKind: AxisScale, yKind: AxisScale): void {
  for (const entry of series) {
    for (const point of entry.points) {
      if (!Number.isFinite(point.x) || !Number.isFinite(point.y)) {
        throw new RangeError(`series "${entry.name}" has a non-finite point (${point.x}, ${point.y})`);
      }
      if (xKind === "log" && point.x <= 0) throw new RangeError(`series "${entry.name}" has x = ${point.x}, not drawable on a log scale`);
      if (yKind === "log" && point.y <= 0) throw new RangeError(`series "${entry.name}" has y = ${point.y}, not drawable on a log scale`);
    }
  }
  for (const reference of references) {
    if (!Number.isFinite(reference.y) || (yKind === "log" && reference.y <= 0)) {
      throw new RangeError(`reference line "${reference.label}" has an undrawable y = ${reference.y}`);
    }
  }
}
