import { describe, expect, it } from 'vitest';
import { signWebhookBody, verifyWebhookSignature } from './signature.js';

describe('webhook signatures', () => {
  const secret = "It's a Secret to Everybody";
  const body = Buffer.from('Hello, World!');

  it('matches the example in GitHub docs (validating webhook deliveries)', () => {
    expect(signWebhookBody(secret, body)).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
    expect(verifyWebhookSignature(secret, body, signWebhookBody(secret, body))).toBe(true);
  });

  it('refuses a missing, malformed, truncated or wrong signature and another secret', () => {
    const good = signWebhookBody(secret, body);
    for (const header of [
      undefined,
      '',
      'sha1=abc',
      good.slice(0, -2),
      `${good}00`,
      `sha256=${'0'.repeat(64)}`,
    ]) {
      expect(verifyWebhookSignature(secret, body, header)).toBe(false);
    }
    expect(verifyWebhookSignature('an older secret!', body, good)).toBe(false);
    expect(verifyWebhookSignature(secret, Buffer.from('Hello, World?'), good)).toBe(false);
  });
});
