/** Codes an identity or reference can fail with (see conformance/references.json). */
export type IdentityErrorCode =
  | 'empty'
  | 'unknown-prefix'
  | 'unknown-suffix'
  | 'duplicate-suffix'
  | 'incomplete'
  | 'empty-segment'
  | 'dot-segment'
  | 'absolute'
  | 'backslash'
  | 'control-char'
  | 'too-long'
  | 'bad-owner'
  | 'bad-repo'
  | 'bad-percent-encoding'
  | 'encoded-separator';

/** Codes a SKILL.md frontmatter can fail with (see conformance/frontmatter.json), plus input limits. */
export type FrontmatterErrorCode =
  | 'no-frontmatter'
  | 'unterminated-frontmatter'
  | 'invalid-yaml'
  | 'not-a-mapping'
  | 'missing-name'
  | 'missing-description'
  | 'name-not-string'
  | 'description-not-string'
  | 'not-utf8'
  | 'too-large'
  | 'too-deep'
  | 'too-many-aliases';

/** Base of every error the protocol raises on purpose; `code` is stable and machine-readable. */
export class ProtocolError extends Error {
  readonly code: string;
  readonly details?: Record<string, unknown>;

  constructor(code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}

/** A bad identity or reference; `code` says which rule of SPEC 1.3 it broke. */
export class IdentityError extends ProtocolError {
  declare readonly code: IdentityErrorCode;

  constructor(code: IdentityErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
    this.name = 'IdentityError';
  }
}

/** A SKILL.md whose frontmatter cannot be indexed. */
export class FrontmatterError extends ProtocolError {
  declare readonly code: FrontmatterErrorCode;

  constructor(code: FrontmatterErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
    this.name = 'FrontmatterError';
  }
}

/** True when `err` is one of the protocol's own errors (as opposed to a bug). */
export function isProtocolError(err: unknown): err is ProtocolError {
  return err instanceof ProtocolError;
}
