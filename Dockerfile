# syntax=docker/dockerfile:1
# paramine service image. System packages match scripts/setup (APT_PACKAGES).

FROM node:20-bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libfaiss-dev libopenblas-dev maven python3 g++ make patch \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-fund --no-audit --loglevel=error
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
COPY patches ./patches
COPY models ./models
RUN npm_config_nodedir=/usr/local npm run build \
 && node dist/cli.js models fetch \
 && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
# Runtime needs OpenBLAS and OpenMP (libgomp) for the statically linked FAISS addon.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libopenblas0 libgomp1 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/src/native/build/Release/paramine_faiss.node ./src/native/build/Release/paramine_faiss.node
COPY --from=build /app/models ./models
# The web page's assets are served from the source tree (no build step).
COPY --from=build /app/src/server/web ./src/server/web
RUN useradd --system --uid 10001 --home /app paramine && mkdir -p /app/indexes /app/jobs && chown -R paramine /app/indexes /app/jobs
USER paramine
ENV NODE_ENV=production
EXPOSE 8080
# Indexes may be mounted read-only; mining jobs and the web page's annotations persist in their own volume.
VOLUME ["/app/indexes", "/app/jobs"]
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve", "--index", "indexes/default", "--jobs-dir", "jobs", "--annotations-dir", "jobs/annotations", "--host", "0.0.0.0", "--port", "8080"]
