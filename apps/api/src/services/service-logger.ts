import type { BaseLogger } from 'pino';

/**
 * The logger a service writes to: pino's level methods. Fastify's app and request loggers fit; services take
 * this type instead of Fastify's (ARCHITECTURE.md rule 4), so they run and test without an app.
 */
export type ServiceLogger = Pick<BaseLogger, 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'>;
