import { formatReference, type SafetyFlag } from '@atskills/protocol';
import { html, type SafeHtml } from './html.js';
import type { FlagView } from './view-models.js';

/** The paste-ready `@skills:` text for an identity with optional suffixes. */
export function referenceText(
  identity: string,
  suffixes: { save?: boolean; install?: boolean } = {},
): string {
  return formatReference({ identity, ...suffixes });
}

/**
 * A reference in a selectable <code> plus a copy button. The button is `hidden` until the copy script runs,
 * so without JavaScript the page shows no dead control and the code can still be selected by hand.
 */
export function referenceBox(reference: string, label = 'Copy'): SafeHtml {
  return html`<div class="reference"><code>${reference}</code><button type="button" class="copy" data-copy="${reference}" aria-label="${`${label} ${reference}`}" hidden>${label}</button></div>`;
}

/** A flag as an API answer carries it (no evidence excerpt), as a badge shows it. */
export function wireFlagView(flag: SafetyFlag): FlagView {
  return {
    rule: flag.code,
    severity: flag.severity,
    message: flag.message,
    ...(flag.file !== undefined ? { file: flag.file } : {}),
    ...(flag.line !== undefined ? { line: flag.line } : {}),
    ...(flag.suppressedBy !== undefined ? { suppressedBy: flag.suppressedBy } : {}),
  };
}

/** The hover text of a flag: the rule, what it means, where it fired and the evidence excerpt. */
export function flagTitle(flag: FlagView): string {
  const where = flag.file ? ` at ${flag.file}${flag.line !== undefined ? `:${flag.line}` : ''}` : '';
  const evidence = flag.evidence ? ` Evidence: ${flag.evidence}` : '';
  return `${flag.rule} (${flag.severity})${where}: ${flag.message.replace(/\.$/, '')}.${evidence}`;
}

/**
 * One badge per rule that fired and still holds (several hits of one rule collapse into one badge listing
 * them all). A flag an accepted dispute suppressed gets no badge: the skill page's table lists it as such.
 */
export function flagBadges(all: readonly FlagView[]): SafeHtml {
  const flags = all.filter((f) => f.suppressedBy === undefined);
  if (flags.length === 0) return html``;
  const byRule = new Map<string, FlagView[]>();
  for (const flag of flags) byRule.set(flag.rule, [...(byRule.get(flag.rule) ?? []), flag]);
  return html`<span class="flags" aria-label="Safety flags">${[...byRule].map(
    ([rule, hits]) =>
      html`<span class="flag severity-${cssToken(worstSeverity(hits))}" title="${hits.map(flagTitle).join('\n')}">${rule}${hits.length > 1 ? ` ×${hits.length}` : ''}</span>`,
  )}</span>`;
}

const SEVERITY_ORDER = ['info', 'warn', 'warning', 'high', 'danger'];

function worstSeverity(flags: readonly FlagView[]): string {
  return flags.reduce(
    (worst, f) => (SEVERITY_ORDER.indexOf(f.severity) > SEVERITY_ORDER.indexOf(worst) ? f.severity : worst),
    flags[0]?.severity ?? 'warn',
  );
}

/** Keeps only characters that are safe in a class name (severity comes from stored data). */
function cssToken(text: string): string {
  return text.replace(/[^a-z0-9-]/gi, '') || 'unknown';
}
