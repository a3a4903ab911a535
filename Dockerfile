# syntax=docker/dockerfile:1
# Vantage container image: both binaries (`vantage` for the coordinator and `vantage check`,
# `vantage-agent` for a region), non-root, read-only-root-filesystem friendly, no
# HEALTHCHECK (Kubernetes probes /healthz and /readyz instead).
#
#   docker build -t vantage:dev .
#
# The build stage runs exactly `cargo build --release --locked --bin vantage --bin
# vantage-agent`, the command CI exercises (charts/tests/run.py).

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock rustfmt.toml clippy.toml ./
COPY proto proto
COPY agent agent
COPY fixture fixture
COPY coordinator coordinator
RUN cargo build --release --locked --bin vantage --bin vantage-agent \
 && install -D -m 0755 target/release/vantage /out/vantage \
 && install -D -m 0755 target/release/vantage-agent /out/vantage-agent

FROM gcr.io/distroless/cc-debian12:nonroot
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="vantage" \
      org.opencontainers.image.description="Checks remote MCP endpoints from several regions" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://example.invalid/vantage"
COPY --from=build /out/vantage /out/vantage-agent /usr/local/bin/
USER 65532:65532
EXPOSE 8080 50051 9101
ENTRYPOINT ["/usr/local/bin/vantage"]
CMD ["serve"]
