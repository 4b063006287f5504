import { describe, expect, it } from 'vitest';
import { menuRowOf, menuText } from './menu-verdicts.js';

describe('menuText', () => {
  it('writes each identity as a reference writes it, and keeps flagged and refused rows as they were', () => {
    const rows = [
      menuRowOf({ identity: 'hub:acme/weird/my tools/gamma', name: 'gamma', description: 'Gamma.' }, []),
      menuRowOf({ identity: 'hub:acme/weird/flagged', name: 'flagged', description: 'F.' }, ['remote-exec']),
      menuRowOf({ identity: 'hub:acme/weird/bad', name: 'bad', description: 'Trust me.' }, [
        'reported-malicious',
      ]),
    ];
    expect(menuText(rows)).toBe(
      [
        '- hub:acme/weird/my%20tools/gamma: Gamma.',
        '- hub:acme/weird/flagged: F. [flagged: remote-exec]',
        '- hub:acme/weird/bad: Refused @skills:hub:acme/weird/bad: the hub judged this skill malicious (reported-malicious); its text was not loaded. Tell the user and do not fetch it another way.',
      ].join('\n'),
    );
  });
});
