# The one image of svc: the server (default command), system update and the operator, as the Helm chart
# runs them, each compiled JavaScript (dist/, built by bin/build.mjs in the first stage):
#   server         node --max-semi-space-size=64 dist/server/src/main.js (see docs/decisions/0019-larger-young-generation.md)
#   system update  node dist/server/src/systemUpdate.js
#   operator       node dist/operator/src/main.js
# Build: docker build -t <registry>/svc:<version> .   (the chart's image.repository and image.tag)

# Stage 1: `npm ci` with the dev dependencies builds dist/ (its `prepare` script runs bin/build.mjs).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY server ./server
COPY operator ./operator
RUN npm ci --no-audit --no-fund

# Stage 2: the runtime dependencies only, and dist/. The TypeScript sources are not in the image.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    PORT=8080 \
    SVC_DATA_DIR=/tmp/svc-data

COPY package.json package-lock.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
# `prepare` runs again here and keeps the built dist/ (no TypeScript without the dev dependencies).
# npm ls fails when a dependency is missing: npm ci can exit 0 without installing (npm 10's "Exit handler
# never called!" after failed fetches), which built an image without node_modules.
RUN npm ci --omit=dev --no-audit --no-fund && npm ls --omit=dev --depth=0 >/dev/null && npm cache clean --force
COPY crds ./crds

# The image's `node` user (uid 1000); the chart runs it with a read-only root and a writable /tmp.
USER 1000:1000
EXPOSE 8080 8081
CMD ["node", "--max-semi-space-size=64", "dist/server/src/main.js"]
