import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** A fine-grained token as stored: which key sealed it and the sealed bytes (never the token itself). */
export interface SealedToken {
  keyId: string;
  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  sealed: string;
}

/** A token could not be opened: unknown key id, or bytes or context that do not authenticate. */
export class TokenKeyringError extends Error {
  override name = 'TokenKeyringError';
}

/**
 * Encrypts team-provided GitHub tokens at rest with AES-256-GCM (node:crypto; a 96-bit random IV per
 * token, the tag checked on every open). The context (the link's identity) is bound as additional data,
 * so a sealed token copied to another row does not open there. Several keys may be configured: the first
 * seals, every one opens, which is what rotation needs.
 */
export class TokenKeyring {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly current: { id: string; key: Buffer } | undefined;

  constructor(keys: readonly { id: string; key: Buffer }[]) {
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
    this.current = keys[0];
  }

  /** True when a key is configured (tokens can be accepted). */
  get enabled(): boolean {
    return this.current !== undefined;
  }

  /** The id of the key new tokens are sealed with. */
  get currentKeyId(): string | undefined {
    return this.current?.id;
  }

  /** Seals a token for one context (e.g. `hub:acme/playbooks`). */
  seal(token: string, context: string): SealedToken {
    if (!this.current) throw new TokenKeyringError('no LINK_TOKEN_KEYS configured');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(`${this.current.id}\0${context}`, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
    return { keyId: this.current.id, sealed: `v1.${parts.join('.')}` };
  }

  /** Opens a sealed token; throws TokenKeyringError when its key is gone or it does not authenticate. */
  open(stored: SealedToken, context: string): string {
    const key = this.keys.get(stored.keyId);
    if (!key) throw new TokenKeyringError(`the key "${stored.keyId}" is not in LINK_TOKEN_KEYS`);
    const [version, iv, tag, ciphertext] = stored.sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ciphertext === undefined) {
      throw new TokenKeyringError('not a sealed token');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(`${stored.keyId}\0${context}`, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new TokenKeyringError('the sealed token does not authenticate');
    }
  }

  /** Re-seals with the current key when another one sealed it; undefined when it is already current. */
  reseal(stored: SealedToken, context: string): SealedToken | undefined {
    if (stored.keyId === this.current?.id) return undefined;
    return this.seal(this.open(stored, context), context);
  }
}
