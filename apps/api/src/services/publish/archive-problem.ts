import { type HttpProblem, PROBLEMS, type ProblemCode, problem } from '../../problems.js';

/** Builds the problem for a rejected publish; the status comes from the code's entry in PROBLEMS. */
export function publishProblem(
  code: ProblemCode,
  detail: string,
  extensions: Record<string, unknown> = {},
): HttpProblem {
  return problem(PROBLEMS[code].status, code, detail, extensions);
}

/** Shows a path from an archive in a message: quoted, with control characters escaped, cut when huge. */
export function showPath(path: string): string {
  const escaped = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}...` : path);
  return escaped;
}
