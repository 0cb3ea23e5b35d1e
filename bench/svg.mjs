// Minimal SVG line charts for the benchmark report (no plotting dependency needed for two axes).

const W = 560;
const H = 320;
const M = { l: 60, r: 140, t: 30, b: 45 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/**
 * series: [{ name, points: [[x, y], ...] }]; returns an SVG document as a string.
 */
export function lineChart({ title, xLabel, yLabel, series }) {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const y1 = Math.max(...ys) * 1.1 || 1;
  const px = (x) => M.l + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (W - M.l - M.r);
  const py = (y) => H - M.b - (y / y1) * (H - M.t - M.b);
  let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">\n`;
  out += `<rect width="100%" height="100%" fill="white"/>\n<text x="${W / 2}" y="18" text-anchor="middle" font-weight="bold">${esc(title)}</text>\n`;
  out += `<line x1="${M.l}" y1="${H - M.b}" x2="${W - M.r}" y2="${H - M.b}" stroke="black"/><line x1="${M.l}" y1="${M.t}" x2="${M.l}" y2="${H - M.b}" stroke="black"/>\n`;
  for (let i = 0; i <= 4; i++) {
    const y = (y1 * i) / 4;
    out += `<text x="${M.l - 6}" y="${py(y) + 4}" text-anchor="end">${y >= 10 ? y.toFixed(0) : y.toFixed(2)}</text><line x1="${M.l}" x2="${W - M.r}" y1="${py(y)}" y2="${py(y)}" stroke="#ddd"/>\n`;
  }
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) out += `<text x="${px(x)}" y="${H - M.b + 16}" text-anchor="middle">${x}</text>\n`;
  out += `<text x="${(M.l + W - M.r) / 2}" y="${H - 8}" text-anchor="middle">${esc(xLabel)}</text>\n`;
  out += `<text transform="translate(14 ${(M.t + H - M.b) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>\n`;
  series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length];
    const pts = [...s.points].sort((a, b) => a[0] - b[0]);
    out += `<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.map((p) => `${px(p[0])},${py(p[1])}`).join(' ')}"/>\n`;
    for (const p of pts) out += `<circle cx="${px(p[0])}" cy="${py(p[1])}" r="3" fill="${c}"/>\n`;
    out += `<rect x="${W - M.r + 10}" y="${M.t + i * 18}" width="12" height="12" fill="${c}"/><text x="${W - M.r + 26}" y="${M.t + i * 18 + 10}">${esc(s.name)}</text>\n`;
  });
  return out + '</svg>\n';
}
