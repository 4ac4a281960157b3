# msv3-gateway image; docs/operating.md ("Docker") explains it. Build: docker build -t msv3-gateway .
# test/deploy-recipes.test.ts keeps the build step and CMD in line with CI and `npm start`.

# Build: the same script as CI's install step (npm ci, npm pack; prepack compiles dist/), then the
# tarball's content installed without dev dependencies from the lockfile. The full image has the
# compiler better-sqlite3 needs when no prebuilt binary can be downloaded.
FROM node:24-bookworm AS build
WORKDIR /src
COPY . .
RUN scripts/build.sh /pack
WORKDIR /app
RUN tar -xzf /pack/msv3-gateway-*.tgz --strip-components=1 \
  && cp /src/package-lock.json . \
  && npm ci --omit=dev --no-audit --no-fund

# Run: the same Debian release (glibc) as the build stage, so the compiled better-sqlite3 loads.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=sqlite:/data/gateway.db
WORKDIR /app
COPY --from=build /app /app
# `msv3-gateway …` on the PATH for `docker exec` (keys commands); the image's `node` user (uid 1000)
# runs it, and the SQLite folder is the only place it writes.
RUN chmod 755 dist/cli.js && ln -s /app/dist/cli.js /usr/local/bin/msv3-gateway \
  && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness only (docs/operating.md, "Health probes"), on HEALTH_PORT where it is set; slim has no curl,
# so Node's fetch asks.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HEALTH_PORT||process.env.PORT||8080)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `npm start` without npm: node gets SIGTERM itself and shuts down gracefully (SHUTDOWN_TIMEOUT_MS).
CMD ["node", "--max-semi-space-size=64", "dist/cli.js", "serve"]
