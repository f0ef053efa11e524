/**
 * GitHub-flavoured Markdown tables for evaluation results. The same text goes to the terminal
 * and into READMEs, so columns are padded to line up in a monospaced font as well as render.
 */

export type ColumnAlign = "left" | "right" | "center";
export type TableCell = string | number;

export interface MarkdownTableOptions {
  /**
   * One entry a column. By default a column whose cells are all numbers is right-aligned
   * (so digits line up) and any other column is left-aligned.
   */
  align?: readonly ColumnAlign[];
}

export function renderMarkdownTable(
  headers: readonly string[],
  rows: readonly (readonly TableCell[])[],
  options: MarkdownTableOptions = {},
): string {
  if (headers.length === 0) throw new RangeError("a Markdown table needs at least one column");
  if (options.align && options.align.length !== headers.length) {
    throw new RangeError(`align has ${options.align.length} entries for ${headers.length} columns`);
  }
  rows.forEach((row, index) => {
    if (row.length !== headers.length) {
      throw new RangeError(`row ${index + 1} has ${row.length} cells for ${headers.length} columns`);
    }
  });

  const align = headers.map(
    (_, column): ColumnAlign =>
      options.align?.[column] ?? (rows.length > 0 && rows.every((row) => typeof row[column] === "number") ? "right" : "left"),
  );
  const headerCells = headers.map(escapeCell);
  const bodyCells = rows.map((row) => row.map((cell) => escapeCell(typeof cell === "number" ? formatNumber(cell) : cell)));
  // The delimiter row needs three characters (":-:" at least) to be recognised as one.
  const widths = headers.map((_, column) =>
    Math.max(3, displayWidth(headerCells[column] ?? ""), ...bodyCells.map((row) => displayWidth(row[column] ?? ""))),
  );

  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => pad(cell, widths[column] ?? 0, align[column] ?? "left")).join(" | ")} |`;
  const delimiter = `|${widths
    .map((width, column) => {
      const dashes = "-".repeat(width);
      switch (align[column]) {
        case "right":
          return ` ${dashes.slice(1)}: `;
        case "center":
          return ` :${dashes.slice(2)}: `;
        default:
          return ` ${dashes} `;
      }
    })
    .join("|")}|`;
  return [line(headerCells), delimiter, ...bodyCells.map(line)].join("\n");
}

function formatNumber(value: number): string {
  // NaN is what an empty mean yields; show it as missing rather than as a number-like "NaN".
  return Number.isNaN(value) ? "–" : String(value);
}

/** A pipe would end the cell and a newline the row; neither may leak out of a cell. */
function escapeCell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function pad(text: string, width: number, align: ColumnAlign): string {
  const gap = Math.max(0, width - displayWidth(text));
  if (align === "right") return " ".repeat(gap) + text;
  if (align === "center") return " ".repeat(Math.floor(gap / 2)) + text + " ".repeat(Math.ceil(gap / 2));
  return text + " ".repeat(gap);
}

/** Counts code points, not UTF-16 units, so "α" or "≈" pad like one column in a terminal. */
function displayWidth(text: string): number {
  return [...text].length;
}
