/**
 * The request header in which a caller of /v1/suggest says how long it waits for the answer, in
 * milliseconds (a whole number, 1-600000). An agent's hook sends its deadline; a hub whose queued
 * suggestions would keep it past that answers at once `503 unavailable` with `Retry-After` instead of
 * late. Kept apart from http.ts (zod) so the hook's start-up path can read it.
 */
export const SUGGEST_TIMEOUT_HEADER = 'atskills-timeout-ms';

/** The longest wait the header may state (ms). */
export const SUGGEST_TIMEOUT_MAX_MS = 600_000;
