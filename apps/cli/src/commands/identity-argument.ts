import { ProtocolError } from '@atskills/protocol';

type Suffix = 'save' | 'install';

// The suffixes of a reference (SPEC 1.3), each at most once, at the end. A folder whose name really ends in
// ":save" is written with its colon encoded (%3A), as in a reference, so this tail is never part of a path.
const SUFFIX_TAIL = /(?::(?:save|install)){1,2}$/;

/**
 * The identity a command argument names, for a command that takes an identity, not a reference: a trailing
 * `:save` / `:install` the command means anyway (`install x:install`) is dropped; any other is refused with
 * the command that does it, instead of being looked up as part of the last folder's name.
 */
export function identityArgument(text: string, command: string, accepts: readonly Suffix[] = []): string {
  const tail = SUFFIX_TAIL.exec(text)?.[0];
  if (!tail) return text;
  const identity = text.slice(0, -tail.length);
  const suffixes = tail.slice(1).split(':') as Suffix[];
  // Only two suffixes exist: a third one left in the identity, or two alike, is one written twice.
  if (new Set(suffixes).size < suffixes.length || SUFFIX_TAIL.test(identity))
    throw new ProtocolError(
      'usage',
      `\`${command}\` takes an identity; "${text}" repeats a reference suffix (:save and :install are each written at most once, and only in @skills: references in a message). A folder whose name holds a colon is written with %3A.`,
    );
  const refused = suffixes.filter((s) => !accepts.includes(s));
  if (refused.length === 0) return identity;
  const named = refused.map((s) => `:${s}`).join(' and ');
  const instead = refused.map((s) => `\`atskills ${s} ${identity}\``).join(', then ');
  const what = refused.length > 1 ? 'are reference suffixes' : 'is a reference suffix';
  throw new ProtocolError(
    'usage',
    `\`${command}\` takes an identity; ${named} ${what} (of @skills: references in a message), not part of it: run ${instead}. A folder whose name holds a colon is written with %3A.`,
  );
}
