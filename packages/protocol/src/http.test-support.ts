// A suggestion as the hub answers it, for the tests of what the hook, `atskills suggest` and the web page
// make of one.
import type { SuggestResult } from './http.js';

/** A suggested skill `hub:acme/tools/<name>` with `score`, answering "fix it"; `overrides` for the rest. */
export function suggestedSkill(
  name: string,
  score: number,
  overrides: Partial<SuggestResult> = {},
): SuggestResult {
  return {
    identity: `hub:acme/tools/${name}`,
    reference: `@skills:hub:acme/tools/${name}`,
    name,
    description: `Does ${name}.`,
    source: 'hub',
    repository: 'acme/tools',
    path: name,
    revision: 'r1',
    popularity: 0,
    descriptionTokens: 10,
    flags: [],
    score,
    matched: 'fix it',
    ...overrides,
  };
}
