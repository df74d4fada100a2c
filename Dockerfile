# The one image of svc: the server (default command), system update and the operator, as the Helm chart
# runs them:
#   server         node --max-semi-space-size=64 --import tsx server/src/main.ts (see the README: garbage collection)
#   system update  node --import tsx server/src/systemUpdate.ts
#   operator       node --import tsx operator/src/main.ts
# Build: docker build -t <registry>/svc:<version> .   (the chart's image.repository and image.tag)
FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production \
    PORT=8080 \
    SVC_DATA_DIR=/tmp/svc-data

COPY package.json package-lock.json ./
# npm ls fails when a dependency is missing: npm ci can exit 0 without installing (npm 10's "Exit handler
# never called!" after failed fetches), which built an image without node_modules.
RUN npm ci --omit=dev --no-audit --no-fund && npm ls --omit=dev --depth=0 >/dev/null && npm cache clean --force

COPY bin ./bin
COPY crds ./crds
COPY server ./server
COPY operator ./operator

# The image's `node` user (uid 1000); the chart runs it with a read-only root and a writable /tmp.
USER 1000:1000
EXPOSE 8080 8081
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "server/src/main.ts"]
