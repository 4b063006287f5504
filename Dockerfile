# syntax=docker/dockerfile:1
# One image for the API and the crawler worker (docker-compose.yml picks the command).
# Stages: deps (all dependencies, cached on the manifests) -> build (TypeScript to dist/) ->
# prod-deps (runtime dependencies only) -> runtime (non-root, git for the crawler, healthcheck).

ARG NODE_VERSION=20.20
FROM node:${NODE_VERSION}-bookworm-slim AS base
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false

# Manifests only, so the dependency layers are reused until a package.json or the lock changes.
FROM base AS manifests
COPY package.json package-lock.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/db/package.json packages/db/
COPY packages/github-auth/package.json packages/github-auth/
COPY apps/api/package.json apps/api/
COPY packages/queue/package.json packages/queue/
COPY packages/crawler/package.json packages/crawler/
COPY apps/crawler/package.json apps/crawler/
COPY apps/cli/package.json apps/cli/

FROM manifests AS deps
RUN npm ci --no-audit

FROM deps AS build
COPY tsconfig.base.json turbo.json ./
COPY packages packages
COPY apps apps
RUN npm run build

FROM manifests AS prod-deps
RUN npm ci --omit=dev --no-audit && npm cache clean --force

FROM base AS runtime
# git: the crawler's transport to GitHub; tini: PID 1 that forwards SIGTERM for graceful shutdown.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 ATSKILLS_DATA_DIR=/app/.data
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/packages ./packages
COPY --from=build /app/apps ./apps
COPY migrations ./migrations
COPY demo ./demo
# The embedded database (a single container without DATABASE_URL) and crawl work files belong to `node`.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "apps/api/dist/server.js"]
