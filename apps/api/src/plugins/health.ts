import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** What one readiness check reports; extra fields (mode, location, ...) describe the dependency. */
export interface CheckResult {
  status: 'up' | 'down';
  error?: string;
  [detail: string]: unknown;
}

/**
 * A readiness probe: resolves with details when the dependency is usable, throws when it is not.
 * Returning `{ status: 'down', ... }` also marks it down (for probes that answer rather than fail).
 */
export type ReadinessCheck = () => Promise<Record<string, unknown> | undefined>;

export interface Readiness {
  /** Adds (or replaces) a named dependency check, e.g. database, migrations, search, queue. */
  addCheck(name: string, check: ReadinessCheck): void;
  /** Runs every check in parallel, each bounded by the timeout. */
  run(): Promise<{ ready: boolean; checks: Record<string, CheckResult> }>;
  /** Marks the instance as going away: readiness fails so load balancers stop sending traffic. */
  drain(): void;
  readonly draining: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    readiness: Readiness;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Creates the check registry behind /readyz. */
export function createReadiness(timeoutMs = 2_000): Readiness {
  const checks = new Map<string, ReadinessCheck>();
  let draining = false;
  return {
    addCheck(name, check) {
      checks.set(name, check);
    },
    async run() {
      const entries = await Promise.all(
        [...checks].map(async ([name, check]): Promise<[string, CheckResult]> => {
          try {
            const details = (await withTimeout(Promise.resolve().then(check), timeoutMs)) ?? {};
            return [name, { status: 'up', ...details } as CheckResult];
          } catch (error) {
            // The message only: connection errors can carry URLs, and a probe body is public.
            return [name, { status: 'down', error: error instanceof Error ? error.message : String(error) }];
          }
        }),
      );
      const results = Object.fromEntries(entries);
      if (draining) results.shutdown = { status: 'down', error: 'shutting down' };
      return { ready: Object.values(results).every((r) => r.status === 'up'), checks: results };
    },
    drain() {
      draining = true;
    },
    get draining() {
      return draining;
    },
  };
}

/** Decorates `app.readiness`, the registry other plugins add their dependency checks to. */
export default fp(
  async function healthPlugin(app: FastifyInstance, options: { readiness?: Readiness; timeoutMs?: number }) {
    app.decorate('readiness', options.readiness ?? createReadiness(options.timeoutMs));
  },
  { name: 'atskills-health' },
);
