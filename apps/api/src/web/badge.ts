import { escapeHtml } from './html.js';

// A flat two-part badge as SVG, like shields.io draws them. Written by hand: the badge is two rectangles
// and two texts, and a badge library would pull in a font-metrics table for what a width estimate does.

const CHAR_WIDTH = 6.5;
const PADDING = 10;
const MAX_LABEL = 48;

function widthOf(text: string): number {
  return Math.round(text.length * CHAR_WIDTH + PADDING * 2);
}

/** The badge of a skill: its name on the left, its uses this week on the right. */
export function renderUsesBadge(name: string, weekUses: number): string {
  const label = name.length > MAX_LABEL ? `${name.slice(0, MAX_LABEL - 1)}…` : name;
  const value = `${weekUses.toLocaleString('en-US')} uses/week`;
  const left = widthOf(label);
  const right = widthOf(value);
  const total = left + right;
  const title = escapeHtml(`${label}: ${value}`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${total}" height="20" role="img" aria-label="${title}">
<title>${title}</title>
<rect width="${left}" height="20" fill="#3b4252"/>
<rect x="${left}" width="${right}" height="20" fill="#1f6f43"/>
<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">
<text x="${left / 2}" y="14">${escapeHtml(label)}</text>
<text x="${left + right / 2}" y="14">${escapeHtml(value)}</text>
</g>
</svg>
`;
}
