import { ProblemDetails } from '@atskills/protocol';
import {
  type ClientSettings,
  type HttpAnswer,
  HttpRequestError,
  headerOf,
  httpRequest,
  hubRouteUrl,
  ResolveError,
} from '@atskills/protocol/node';
import { oneLine } from './format/printable.js';

/** How one call to the hub goes beyond its method and route. */
export interface HubRequestInit {
  body?: Buffer;
  contentType?: string;
  /** false: send no token, even a stored one. */
  auth?: boolean;
  /** Overrides the stored token (login checks a token before storing it). */
  token?: string;
  /** The call's own deadline (ms), for calls worth less than a download (default: the fetch timeout). */
  timeoutMs?: number;
  /** More request headers, names in lower case. */
  headers?: Record<string, string>;
}

/**
 * One call to the hub's JSON API (search, suggest, publish, resolve, who am I, links); errors become
 * ResolveErrors with exit-code meaning, each message saying what happened and what to do.
 */
export async function hubRequest(
  settings: Readonly<ClientSettings>,
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  route: string,
  init: HubRequestInit = {},
): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  if (init.contentType) headers['content-type'] = init.contentType;
  const token = init.token ?? settings.hubToken;
  if (token && init.auth !== false) headers.authorization = `Bearer ${token}`;
  const url = hubRouteUrl(settings.hubUrl, route);
  let response: HttpAnswer;
  try {
    // node:http, not fetch: see @atskills/protocol/node http-request.ts (fetch delays the process's exit).
    response = await httpRequest(url, {
      method,
      headers,
      ...(init.body ? { body: init.body } : {}),
      timeoutMs: init.timeoutMs ?? settings.fetchTimeoutMs,
    });
  } catch (error) {
    if (!(error instanceof HttpRequestError)) throw error;
    if (error.code !== 'unreachable')
      throw new ResolveError(
        'network',
        `The hub's answer to ${method} ${route} was unreadable: ${error.message}.`,
      );
    throw new ResolveError('offline', `The hub at ${settings.hubUrl} cannot be reached (${error.message}).`);
  }
  const text = response.body.toString('utf8');
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.ok) {
    if (json === undefined)
      throw new ResolveError(
        'network',
        `The hub answered ${method} ${route} with something that is not JSON.`,
      );
    return json;
  }
  throw refusal(response, json, text);
}

/** The error for a hub's non-2xx answer: its status, its problem's detail, and what to do about it. */
function refusal(response: HttpAnswer, json: unknown, text: string): ResolveError {
  const problem = ProblemDetails.safeParse(json);
  // The hub's words go to a terminal: no control characters, and of a page that is no problem, one line of
  // at most 200 characters.
  const said =
    withoutFinalStop(
      problem.success ? oneLine(problem.data.detail ?? problem.data.title) : oneLine(text, 200),
    ) || 'no reason given';
  const details: Record<string, unknown> = { status: response.status };
  if (problem.success) details.hubCode = problem.data.code;
  const status = response.status;
  if (status === 401 || status === 403) {
    return new ResolveError(
      'no-access',
      `The hub refused access (${status}): ${said}. Run \`atskills login --hub <url>\` with a token that may do this.`,
      details,
    );
  }
  if (status === 404) return new ResolveError('not-found', `The hub answered 404: ${said}.`, details);
  // Too many requests or too busy: nothing the user typed is wrong, so no usage error but the hub's
  // refusal (exit 4); asking again is the fix, when the hub says (a 503 without Retry-After, such as a
  // model over its memory budget, waits for an operator, so it promises nothing).
  if (status === 429 || status === 503) {
    const seconds = retryAfterSeconds(response, problem.success ? problem.data : undefined);
    if (seconds !== undefined) details.retryAfterSeconds = seconds;
    const what = status === 429 ? 'is limiting requests (429)' : 'is unavailable for now (503)';
    const retry =
      seconds !== undefined ? ` Try again in ${seconds} s.` : status === 429 ? ' Try again later.' : '';
    return new ResolveError('network', `The hub ${what}: ${said}.${retry}`, details);
  }
  if (status >= 500) return new ResolveError('network', `The hub failed (${status}): ${said}.`, details);
  return new ResolveError(
    'usage',
    `The hub refused the request (${status}${problem.success ? ` ${problem.data.code}` : ''}): ${said}.`,
    details,
  );
}

/**
 * How long the hub asks a caller to wait before asking again: `Retry-After` in seconds or as a date, else the
 * problem's `retryAfterSeconds`; undefined when it says nothing.
 */
function retryAfterSeconds(response: HttpAnswer, problem: ProblemDetails | undefined): number | undefined {
  const header = headerOf(response, 'retry-after')?.trim();
  if (header !== undefined && header !== '') {
    if (/^\d+$/.test(header)) return Number(header);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const stated = problem?.retryAfterSeconds;
  return typeof stated === 'number' && Number.isFinite(stated) && stated >= 0 ? Math.ceil(stated) : undefined;
}

/** `text` without its closing full stop(s), so that a sentence built around it ends with exactly one. */
function withoutFinalStop(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '.') end--;
  return text.slice(0, end);
}
