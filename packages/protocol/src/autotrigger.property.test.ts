import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addAutotriggerLine,
  expandAutotrigger,
  parseAutotrigger,
  removeAutotriggerLine,
} from './autotrigger.js';
import { ProtocolError } from './errors.js';
import { normalizeIdentity } from './identity.js';

const folder = fc
  .array(
    fc.constantFrom('team', 'a', 'b', 'gh', 'o', 'r', 'hub', 'acme', '..', '.x', 'my skill', '技能', '%', ''),
    {
      minLength: 1,
      maxLength: 4,
    },
  )
  .map((segments) => segments.join('/'));

const line = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }).filter((l) => !/[\r\n]/.test(l)),
  fc
    .tuple(
      fc.constantFrom('', '!', '#', '\\!', ' '),
      fc.constantFrom('', '@', '@gh:', '@hub:', '/'),
      folder,
      fc.constantFrom('', '/', '/*', '*', '/**', ' '),
    )
    .map((parts) => parts.join('')),
);

const content = fc
  .tuple(fc.array(line, { maxLength: 8 }), fc.constantFrom('\n', '\r\n'), fc.constantFrom('', '\n'))
  .map(([lines, eol, end]) => lines.join(eol) + end);

describe('.autotrigger properties', () => {
  it('never throws and only yields canonical identities', () => {
    fc.assert(
      fc.property(content, fc.array(folder, { maxLength: 6 }), (text, folders) => {
        const { rules } = parseAutotrigger(text);
        for (const rule of rules)
          if (rule.identity) expect(normalizeIdentity(rule.identity)).toBe(rule.identity);
        const { entries } = expandAutotrigger(text, folders);
        expect(new Set(entries.map((e) => e.identity)).size).toBe(entries.length);
        for (const entry of entries) expect(normalizeIdentity(entry.identity)).toBe(entry.identity);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses an entry spanning several lines', () => {
    expect(() => addAutotriggerLine('', 'a\nb')).toThrow(ProtocolError);
    expect(() => removeAutotriggerLine('', 'a\rb')).toThrow(ProtocolError);
  });

  it('installing is idempotent and uninstalling removes what was installed', () => {
    fc.assert(
      fc.property(content, line, (text, installed) => {
        const once = addAutotriggerLine(text, installed);
        expect(addAutotriggerLine(once, installed)).toBe(once);
        const removed = removeAutotriggerLine(once, installed);
        expect(removeAutotriggerLine(removed, installed)).toBe(removed);
        const meaningful = installed.trim() !== '' && !installed.trim().startsWith('#');
        // After uninstalling, no equivalent line is left: installing again changes the file.
        if (meaningful) expect(addAutotriggerLine(removed, installed)).not.toBe(removed);
        else expect(once).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});
