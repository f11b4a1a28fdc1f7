// The bench's chart (docs/benchmarks.svg): one bar group per comparison (bench-comparisons.mjs),
// each side's median as a bar with a whisker from its min to its max, on one linear ms scale, the
// ratio of medians of interleaved pairs and its target beside the group's title. Below them, panels
// of single figures (sizes, startup CPU, concurrency: bench-comparisons.mjs `panels`), each on a
// linear scale of its own with its target line. A pure function from figures to SVG text: no
// layout engine, no fonts measured (labels get room by rule).

const WIDTH = 1060;
const PLOT_LEFT = 200;
const PLOT_RIGHT = 900;
const HEADER = 84;
const GROUP = 66;
const AXIS = 40;
/** A panel's title, each of its rows, and its axis. */
const PANEL_TITLE = 30;
const PANEL_ROW = 22;
const PANEL_AXIS = 34;
const PANEL_LEFT = 330;
const BAR = 14;
const COLORS = { a: '#2563eb', b: '#9ca3af' };
/** Characters of an n/a reason that fit right of the labels. */
const NA_CHARS = 110;

const escapeXml = (text) =>
  String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(Math.abs(v) >= 10 ? 1 : 2));
const px = (v) => Math.round(v * 10) / 10;

/** Round tick values from 0 past `max` (steps of 1, 2 or 5 × a power of ten, about 6 of them). */
function ticks(max) {
  const raw = Math.max(max, 1) / 6;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * power).find((s) => s >= raw);
  const out = [];
  for (let v = 0; out.length === 0 || out.at(-1) < max; v += step) out.push(v);
  return out;
}

/** `text`, cut to `max` characters with an ellipsis (the page holds the whole of it). */
const cut = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The title line of a group: its title, then the ratio of medians with its range and target. */
function groupTitle(c) {
  if (c.na) return c.target === undefined ? c.title : `${c.title} (target ≤ ${c.target})`;
  const target = c.target === undefined ? '' : `; target ≤ ${c.target}`;
  return `${c.title}: ratio ${num(c.ratio.median)} (${num(c.ratio.min)}–${num(c.ratio.max)}, n=${c.ratio.n}${target})`;
}

/**
 * The chart as SVG text. `items`: comparisons as `comparisons(figures)` gives them (`{ id, title,
 * labels: [a, b], a, b, ratio, target? }` with ms figures `{ min, median, max, n }`, or `{ id,
 * title, labels, na }`); `caption`: one line under the title (commit, machine, load).
 * Each group is `<g class="comparison" data-id>`; each side a `rect.bar` (0 → median) and a
 * `line.whisker` (min → max) with `data-side` a or b. `panels` (bench-comparisons.mjs `panels`)
 * follow, each a `<g class="panel" data-id>` whose rows are `rect.panel-bar` (0 → median or the
 * value) with a `line.panel-whisker` (min → max) for a figure of several runs, and whose target
 * is a `line.limit`.
 * @param {object[]} items
 * @param {{ caption: string, panels?: import('./bench-comparisons.mjs').Panel[] }} options
 */
export function renderChart(items, { caption, panels = [] }) {
  const measured = items.filter((c) => !c.na);
  const max = Math.max(1, ...measured.flatMap((c) => [c.a.max, c.b.max]));
  const axis = ticks(max);
  const x = (ms) => px(PLOT_LEFT + (ms / axis.at(-1)) * (PLOT_RIGHT - PLOT_LEFT));
  const plotBottom = HEADER + items.length * GROUP;
  const panelHeight = (panel) => PANEL_TITLE + panel.rows.length * PANEL_ROW + PANEL_AXIS;
  const height = plotBottom + AXIS + panels.reduce((sum, panel) => sum + panelHeight(panel), 0);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="bold" fill="#111827">runSandbox against the alternatives: medians (ms), whiskers min–max</text>`,
    `<text x="16" y="44" fill="#4b5563">${escapeXml(caption)}</text>`,
    `<rect x="16" y="58" width="12" height="12" fill="${COLORS.a}"/><text x="34" y="68" fill="#111827">this package (runSandbox)</text>`,
    `<rect x="210" y="58" width="12" height="12" fill="${COLORS.b}"/><text x="228" y="68" fill="#111827">the alternative it is compared with</text>`,
  ];
  for (const value of axis) {
    out.push(
      `<line class="grid" x1="${x(value)}" y1="${HEADER}" x2="${x(value)}" y2="${plotBottom}" stroke="#e5e7eb"/>`,
    );
    out.push(
      `<text class="tick" x="${x(value)}" y="${plotBottom + 16}" text-anchor="middle" fill="#4b5563">${value}</text>`,
    );
  }
  out.push(`<text x="${PLOT_RIGHT}" y="${plotBottom + 32}" text-anchor="end" fill="#4b5563">ms</text>`);
  items.forEach((c, index) => {
    const top = HEADER + index * GROUP;
    out.push(`<g class="comparison" data-id="${escapeXml(c.id)}">`);
    out.push(`<text x="16" y="${top + 14}" font-weight="bold" fill="#111827">${escapeXml(groupTitle(c))}</text>`);
    if (c.na) {
      out.push(
        `<text x="${PLOT_LEFT}" y="${top + 38}" fill="#b91c1c">${escapeXml(cut(`n/a (${c.na})`, NA_CHARS))}</text>`,
      );
    } else {
      ['a', 'b'].forEach((side, i) => {
        const s = c[side];
        const y = top + 22 + i * (BAR + 6);
        const mid = px(y + BAR / 2);
        out.push(
          `<text x="${PLOT_LEFT - 8}" y="${mid + 4}" text-anchor="end" fill="#374151">${escapeXml(c.labels[i])}</text>`,
        );
        out.push(
          `<rect class="bar" data-side="${side}" x="${PLOT_LEFT}" y="${y}" width="${px(x(s.median) - PLOT_LEFT)}" height="${BAR}" fill="${COLORS[side]}"/>`,
        );
        out.push(
          `<line class="whisker" data-side="${side}" x1="${x(s.min)}" y1="${mid}" x2="${x(s.max)}" y2="${mid}" stroke="#111827"/>`,
        );
        for (const end of [s.min, s.max])
          out.push(`<line x1="${x(end)}" y1="${mid - 4}" x2="${x(end)}" y2="${mid + 4}" stroke="#111827"/>`);
        out.push(
          `<text x="${Math.max(x(s.max), x(s.median)) + 6}" y="${mid + 4}" fill="#374151">${num(s.median)} ms</text>`,
        );
      });
    }
    out.push('</g>');
  });
  let top = plotBottom + AXIS;
  for (const panel of panels) {
    out.push(...renderPanel(panel, top));
    top += panelHeight(panel);
  }
  out.push('</svg>', '');
  return out.join('\n');
}

/** A panel's figure as `{ median, min?, max? }` (a plain number has no whisker), or null for n/a. */
const panelValue = (figure) =>
  typeof figure === 'number'
    ? { median: figure }
    : figure && !figure.na && typeof figure.median === 'number'
      ? figure
      : null;

/** The SVG lines of one panel of single figures, its top at `top`. */
function renderPanel(panel, top) {
  const values = panel.rows.map((row) => panelValue(row.figure));
  const max = Math.max(1, panel.limit?.value ?? 0, ...values.filter(Boolean).map((v) => v.max ?? v.median));
  const axis = ticks(max);
  const x = (v) => px(PANEL_LEFT + (v / axis.at(-1)) * (PLOT_RIGHT - PANEL_LEFT));
  const rowsTop = top + PANEL_TITLE;
  const bottom = rowsTop + panel.rows.length * PANEL_ROW;
  const out = [
    `<g class="panel" data-id="${escapeXml(panel.id)}">`,
    `<text x="16" y="${top + 20}" font-weight="bold" fill="#111827">${escapeXml(panel.title)}</text>`,
  ];
  for (const value of axis) {
    out.push(`<line class="grid" x1="${x(value)}" y1="${rowsTop}" x2="${x(value)}" y2="${bottom}" stroke="#e5e7eb"/>`);
    out.push(
      `<text class="tick" x="${x(value)}" y="${bottom + 16}" text-anchor="middle" fill="#4b5563">${value}</text>`,
    );
  }
  out.push(
    `<text x="${PLOT_RIGHT}" y="${bottom + 30}" text-anchor="end" fill="#4b5563">${escapeXml(panel.unit)}</text>`,
  );
  panel.rows.forEach((row, i) => {
    const y = rowsTop + i * PANEL_ROW + 3;
    const mid = px(y + BAR / 2);
    out.push(
      `<text x="${PANEL_LEFT - 8}" y="${mid + 4}" text-anchor="end" fill="#374151">${escapeXml(row.label)}</text>`,
    );
    const v = values[i];
    if (!v) {
      const why = row.figure?.na ?? 'not measured';
      out.push(`<text x="${PANEL_LEFT}" y="${mid + 4}" fill="#b91c1c">${escapeXml(cut(`n/a (${why})`, 80))}</text>`);
      return;
    }
    out.push(
      `<rect class="panel-bar" x="${PANEL_LEFT}" y="${y}" width="${px(x(v.median) - PANEL_LEFT)}" height="${BAR}" fill="${COLORS.a}"/>`,
    );
    if (v.min !== undefined && v.max !== undefined)
      out.push(
        `<line class="panel-whisker" x1="${x(v.min)}" y1="${mid}" x2="${x(v.max)}" y2="${mid}" stroke="#111827"/>`,
      );
    const n = v.n === undefined ? '' : ` (n=${v.n})`;
    const label = `${num(v.median)} ${panel.unit}${n}${row.note ? `; ${row.note}` : ''}`;
    out.push(
      `<text x="${Math.max(x(v.max ?? v.median), x(v.median)) + 6}" y="${mid + 4}" fill="#374151">${escapeXml(label)}</text>`,
    );
  });
  if (panel.limit) {
    const lx = x(panel.limit.value);
    out.push(
      `<line class="limit" x1="${lx}" y1="${rowsTop - 4}" x2="${lx}" y2="${bottom}" stroke="#b91c1c" stroke-dasharray="4 3"/>`,
    );
    out.push(
      `<text x="${lx}" y="${rowsTop - 6}" text-anchor="middle" fill="#b91c1c">${escapeXml(panel.limit.label)}</text>`,
    );
  }
  out.push('</g>');
  return out;
}
