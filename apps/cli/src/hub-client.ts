import { ProblemDetails } from '@atskills/protocol';
import {
  type ClientSettings,
  type HttpAnswer,
  HttpRequestError,
  httpRequest,
  ResolveError,
} from '@atskills/protocol/node';

/**
 * One call to the hub's JSON API (search, publish, resolve, who am I, links); errors become ResolveErrors with
 * exit-code meaning. `token` overrides the stored one (login checks a token before storing it).
 */
export async function hubRequest(
  settings: Readonly<ClientSettings>,
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  route: string,
  init: { body?: Buffer; contentType?: string; auth?: boolean; token?: string } = {},
): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.contentType) headers['content-type'] = init.contentType;
  const token = init.token ?? settings.hubToken;
  if (token && init.auth !== false) headers.authorization = `Bearer ${token}`;
  const url = `${settings.hubUrl}${route}`;
  let response: HttpAnswer;
  try {
    // node:http, not fetch: see @atskills/protocol/node http-request.ts (fetch delays the process's exit).
    response = await httpRequest(url, {
      method,
      headers,
      ...(init.body ? { body: init.body } : {}),
      timeoutMs: settings.fetchTimeoutMs,
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
  const problem = ProblemDetails.safeParse(json);
  const said = problem.success ? (problem.data.detail ?? problem.data.title) : text.slice(0, 200);
  const details: Record<string, unknown> = { status: response.status };
  if (problem.success) details.hubCode = problem.data.code;
  if (response.status === 401 || response.status === 403) {
    throw new ResolveError(
      'no-access',
      `The hub refused access (${response.status}): ${said}. Run \`atskills login --hub <url>\` with a token that may do this.`,
      details,
    );
  }
  if (response.status === 404) throw new ResolveError('not-found', `The hub answered 404: ${said}`, details);
  if (response.status >= 500)
    throw new ResolveError('network', `The hub failed (${response.status}): ${said}`, details);
  throw new ResolveError(
    'usage',
    `The hub refused the request (${response.status}${problem.success ? ` ${problem.data.code}` : ''}): ${said}`,
    details,
  );
}
