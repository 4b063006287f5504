/**
 * No Docker engine runs here, so the deploy files are checked as far as they can be without one: the
 * compose file parses and has the shape the issue asks for, every environment variable a service gets is
 * a setting its config schema reads, every setting is documented in .env.example, and the commands the
 * Dockerfile and compose run exist (npm scripts, built entry points, CLI sub-commands, copied paths).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CrawlerSettingsSchema } from '@atskills/crawler';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_KEYS } from '../apps/api/src/config.js';
import { OPS_CONFIG_KEYS } from '../apps/api/src/runtime/ops-config.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

const CRAWLER_KEYS = Object.keys(CrawlerSettingsSchema.shape);
// The API process also runs the embedded crawler (and enqueues for workers), so it reads the crawler's settings.
const API_KEYS = new Set([...CONFIG_KEYS, ...OPS_CONFIG_KEYS, ...CRAWLER_KEYS]);
const SCHEMA_KEYS: Record<string, Set<string>> = { api: API_KEYS, crawler: new Set(CRAWLER_KEYS) };

interface ComposeService {
  image?: string;
  build?: { context: string; target?: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const dockerfile = read('Dockerfile');
const envExample = read('.env.example');
const envExampleKeys = [...envExample.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
const composeVariables = [
  ...new Set([...read('docker-compose.yml').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!)),
];

/** The source file a built entry point comes from: apps/api/dist/server.js <- apps/api/src/server.ts. */
function sourceOf(builtFile: string): string {
  return builtFile.replace('/dist/', '/src/').replace(/\.js$/, '.ts');
}

describe('docker-compose.yml', () => {
  it('runs Postgres 16, Redis 7 (noeviction, persistent) and a pinned Meilisearch with its key from the env', () => {
    expect(services.postgres?.image).toMatch(/^postgres:16(\.|-|$)/);
    expect(services.redis?.image).toMatch(/^redis:7(\.|-|$)/);
    const redisCommand = services.redis?.command?.join(' ') ?? '';
    expect(redisCommand).toContain('--maxmemory-policy noeviction');
    expect(redisCommand).toContain('--appendonly yes');
    expect(services.meilisearch?.image).toMatch(/^getmeili\/meilisearch:v\d+\.\d+\.\d+$/);
    expect(services.meilisearch?.environment?.MEILI_MASTER_KEY).toMatch(/^\$\{MEILI_MASTER_KEY/);
  });

  it('keeps every data service on a named volume and health-checks every service', () => {
    for (const [name, mount] of [
      ['postgres', '/var/lib/postgresql/data'],
      ['redis', '/data'],
      ['meilisearch', '/meili_data'],
    ] as const) {
      const volume = services[name]?.volumes?.find((v) => v.endsWith(`:${mount}`))?.split(':')[0];
      expect(volume, `${name} keeps ${mount} on a volume`).toBeDefined();
      expect(compose.volumes).toHaveProperty(volume!);
    }
    for (const [name, service] of Object.entries(services)) {
      expect(service.healthcheck?.test.length, `${name} has a healthcheck`).toBeGreaterThan(0);
    }
  });

  it('builds the api and the crawler worker from the one Dockerfile, started once their dependencies are healthy', () => {
    const stages = [...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]);
    for (const name of ['api', 'crawler']) {
      const service = services[name]!;
      expect(service.build?.context).toBe('.');
      expect(stages).toContain(service.build?.target);
      const dependencies = Object.entries(service.depends_on ?? {});
      expect(dependencies.length).toBeGreaterThan(0);
      for (const [dependency, { condition }] of dependencies) {
        expect(services).toHaveProperty(dependency);
        expect(condition, `${name} waits for ${dependency}`).toBe('service_healthy');
      }
    }
    expect(services.api?.environment?.DATABASE_URL).toMatch(/^postgres:\/\//);
    expect(services.api?.environment?.REDIS_URL).toMatch(/^redis:\/\//);
    expect(services.api?.environment?.MEILI_URL).toMatch(/^http:\/\//);
  });

  it('gives each app service only settings its config schema reads', () => {
    for (const [name, keys] of Object.entries(SCHEMA_KEYS)) {
      const unknown = Object.keys(services[name]?.environment ?? {}).filter((key) => !keys.has(key));
      expect(unknown, `${name} environment variables that no config schema reads`).toEqual([]);
    }
  });

  it('runs commands that exist: built entry points of real sources and real CLI sub-commands', () => {
    for (const name of ['api', 'crawler']) {
      const [program, entry, subcommand] = services[name]!.command!;
      expect(program).toBe('node');
      expect(
        existsSync(path.join(ROOT, sourceOf(entry!))),
        `${entry} is built from ${sourceOf(entry!)}`,
      ).toBe(true);
      if (subcommand) expect(read(sourceOf(entry!))).toContain(`.command('${subcommand}')`);
    }
  });
});

describe('Dockerfile', () => {
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('#'));

  it('builds on Node 20 slim, runs as a non-root user with a healthcheck and an init for signals', () => {
    expect(dockerfile).toMatch(/^ARG NODE_VERSION=20(\.\d+)*$/m);
    expect(dockerfile).toMatch(/^FROM node:\$\{NODE_VERSION\}-[a-z]+-slim AS base$/m);
    const users = instructions.filter((line) => line.startsWith('USER '));
    expect(users.at(-1)).toBe('USER node');
    expect(instructions.some((line) => /^HEALTHCHECK .*CMD .*\/readyz/.test(line))).toBe(true);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
  });

  it('only runs npm scripts that package.json defines', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    const used = instructions
      .filter((line) => line.startsWith('RUN '))
      .flatMap((line) => [...line.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!));
    expect(used.length).toBeGreaterThan(0);
    for (const script of used) expect(scripts, `npm run ${script}`).toHaveProperty(script);
    expect(instructions.some((line) => /^RUN npm ci\b/.test(line))).toBe(true);
  });

  it('starts a built entry point that has a source, and copies paths that exist', () => {
    const cmd = instructions.find((line) => line.startsWith('CMD '))!;
    const [program, entry] = JSON.parse(cmd.slice(4)) as string[];
    expect(program).toBe('node');
    expect(existsSync(path.join(ROOT, sourceOf(entry!)))).toBe(true);
    for (const line of instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='))) {
      const sources = line.split(/\s+/).slice(1, -1);
      for (const source of sources) expect(existsSync(path.join(ROOT, source)), `COPY ${source}`).toBe(true);
    }
  });

  it('copies every workspace manifest before npm ci, so the dependency layer installs every workspace', () => {
    const workspaces = [
      'packages/protocol',
      'packages/db',
      'packages/queue',
      'packages/crawler',
      'apps/api',
      'apps/crawler',
      'apps/cli',
    ];
    for (const ws of workspaces) {
      expect(existsSync(path.join(ROOT, ws, 'package.json'))).toBe(true);
      expect(dockerfile).toContain(`COPY ${ws}/package.json ${ws}/`);
    }
  });
});

describe('.env.example', () => {
  it('documents every setting of the API, the runtime and the crawler', () => {
    const missing = [...API_KEYS].filter((key) => !envExampleKeys.includes(key));
    expect(missing, 'settings to add to .env.example').toEqual([]);
  });

  it('lists only settings something reads (a config schema or docker-compose.yml)', () => {
    const unread = envExampleKeys.filter((key) => !API_KEYS.has(key) && !composeVariables.includes(key));
    expect(unread).toEqual([]);
  });

  it('documents every variable docker-compose.yml interpolates', () => {
    const missing = composeVariables.filter((key) => !envExampleKeys.includes(key));
    expect(missing).toEqual([]);
  });

  it('is valid for the config schemas as written (defaults parse)', async () => {
    const { loadConfig } = await import('../apps/api/src/config.js');
    const { loadOpsConfig } = await import('../apps/api/src/runtime/ops-config.js');
    const { loadSettings } = await import('@atskills/crawler');
    const env = Object.fromEntries(
      [...envExample.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [
        m[1]!,
        m[2]!.replace(/^"(.*)"$/, '$1'),
      ]),
    );
    expect(() => loadConfig(env)).not.toThrow();
    expect(loadOpsConfig(env).rateLimitWindow).toBe(60_000); // `1 minute`, read as the rate limiter reads it
    expect(() => loadSettings(env)).not.toThrow();
  });
});
