# One image for both containers of a pod: the sidecar (`node --import tsx sidecar/main.ts`) and the
# Node edge (`node --import tsx edge/hosts/node/main.ts`); deploy/kubernetes/ runs it twice with two commands.
#
#   docker build -t llm-edge .                         # CPU (and Vulkan, with the host's driver)
#   docker build -t llm-edge:cuda --build-arg RUNTIME=nvidia/cuda:13.0.1-runtime-ubuntu24.04 .
#
# The CUDA build of llama.cpp that node-llama-cpp ships links libcudart.so.13 and libcublas.so.13,
# so a GPU image needs a CUDA 13 runtime base; the driver (libcuda.so.1) comes from the node through
# the NVIDIA container toolkit. Models are not in the image: MODEL names a file on a volume, or an
# hf:/https: address downloaded into MODELS_DIR at start.
ARG RUNTIME=node:20-bookworm-slim

FROM node:20-bookworm-slim AS build
WORKDIR /app
# npm 11 honours package.json "allowScripts" (docs/decisions.md, "Install scripts denied"):
# only better-sqlite3's install script runs. python3, make and g++ let it compile when no
# prebuilt binary fits.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/* \
  && npm install -g npm@11.19.1
COPY package.json package-lock.json ./
# patches/: a fix to node-llama-cpp's JavaScript that the postinstall applies (patches/README.md).
COPY patches patches
RUN npm ci --omit=dev
COPY edge edge
COPY sidecar sidecar
COPY gguf gguf
COPY proto/gen proto/gen
COPY migrations migrations
COPY public public
COPY tsconfig.json ./

FROM ${RUNTIME}
# The node binary from the build stage, so that a CUDA base image runs the same Node 20.
COPY --from=build /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production MODELS_DIR=/models STORE_PATH=/data/llm-edge.sqlite
RUN mkdir -p /models /data && chown 1000:1000 /models /data
USER 1000
EXPOSE 8080 9400
# The edge by default; the sidecar's container gives: node --import tsx sidecar/main.ts
CMD ["node", "--import", "tsx", "edge/hosts/node/main.ts"]
