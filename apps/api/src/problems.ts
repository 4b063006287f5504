/**
 * The closed list of problem codes the hub answers with, grouped by area. Every error response is
 * application/problem+json whose `code` is one of these; clients switch on `code`, never on `title`.
 * Other areas add their codes here (keep each group together).
 */
export const PROBLEMS = {
  // Generic request shape.
  'bad-request': { status: 400, title: 'Bad request' },
  'bad-cursor': { status: 400, title: 'Bad cursor' },
  'bad-path': { status: 400, title: 'Bad file path' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'not-acceptable': { status: 406, title: 'Not acceptable' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'headers-too-large': { status: 431, title: 'Request header fields too large' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  // Resolution.
  'bad-identity': { status: 400, title: 'Bad identity' },
  'not-found': { status: 404, title: 'Not found' },
  gone: { status: 410, title: 'Gone upstream' },
  'over-cap': { status: 422, title: 'Too many skills under this path' },
  'not-a-skill': { status: 422, title: 'Not a skill' },
  'skill-refused': { status: 403, title: 'Skill judged malicious: its text is not served' },
  // Indexing (SPEC 2.6).
  moved: { status: 301, title: 'Moved to a new repository name' },
  'invalid-repository': { status: 400, title: 'Not a GitHub repository name' },
  'bad-signature': { status: 401, title: 'Webhook signature missing or wrong' },
  // Auth (teams).
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  conflict: { status: 409, title: 'Conflict' },
  // Publishing (teams): each hostile archive kind has its own code.
  'invalid-name': { status: 400, title: 'Invalid name' },
  'archive-corrupt': { status: 400, title: 'Archive is not valid gzip' },
  'archive-truncated': { status: 400, title: 'Archive is truncated' },
  'archive-bad-header': { status: 400, title: 'Invalid tar header' },
  'archive-trailing-data': { status: 400, title: 'Data after the end of the tar archive' },
  'archive-unsafe-path': { status: 400, title: 'Unsafe path in archive' },
  'archive-path-too-long': { status: 400, title: 'Path in archive too long' },
  'archive-name-encoding': { status: 400, title: 'Path in archive is not UTF-8' },
  'archive-link': { status: 400, title: 'Link in archive' },
  'archive-special-file': { status: 400, title: 'Device, FIFO or other special file in archive' },
  'archive-duplicate-path': { status: 400, title: 'Duplicate path in archive' },
  'archive-case-collision': { status: 400, title: 'Paths in archive differ only by case' },
  'archive-too-large': { status: 413, title: 'Archive unpacks too large' },
  'archive-too-many-files': { status: 413, title: 'Too many files in archive' },
  'archive-file-too-large': { status: 413, title: 'File in archive too large' },
  'archive-compression-ratio': { status: 413, title: 'Archive compression ratio too high' },
  'skill-file-too-large': { status: 413, title: 'SKILL.md too large' },
  'too-many-skills': { status: 413, title: 'Too many skills in collection' },
  'no-skills': { status: 422, title: 'No skills in archive' },
  'invalid-skill': { status: 422, title: 'Invalid skill' },
  // Linked GitHub repositories (teams).
  'collection-linked': { status: 409, title: 'Collection is linked to a GitHub repository' },
  'link-credential-refused': { status: 422, title: 'GitHub refused the credential' },
  'link-not-configured': { status: 422, title: 'Linking with this credential is not configured' },
  // Server side.
  internal: { status: 500, title: 'Internal server error' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

/** A problem code of the closed list. */
export type ProblemCode = keyof typeof PROBLEMS;

/** The URI of a problem type (RFC 9457 `type`): stable, documented in apps/api/README.md. */
export function problemType(code: ProblemCode): string {
  return `urn:atskills:problem:${code}`;
}

/** An error that becomes exactly one problem+json response. Throw it from handlers and services. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly detail: string | undefined;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: ProblemCode,
    detail?: string,
    extensions: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(detail ?? PROBLEMS[code].title);
    this.name = 'HttpProblem';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.extensions = extensions;
    this.headers = headers;
  }
}

/**
 * Builds an HttpProblem to throw, its status taken from PROBLEMS:
 * `throw problem('not-found', 'No skill at that identity')`.
 */
export function problem(
  code: ProblemCode,
  detail?: string,
  extensions?: Record<string, unknown>,
  headers?: Record<string, string>,
): HttpProblem {
  return new HttpProblem(PROBLEMS[code].status, code, detail, extensions, headers);
}

/** True for an HttpProblem. */
export function isHttpProblem(err: unknown): err is HttpProblem {
  return err instanceof HttpProblem;
}
