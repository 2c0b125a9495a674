# mcp-governance: the governance service on the embedded lockfile store (the PostgreSQL driver is
# installed too: docker-compose.yml runs two replicas on PostgreSQL with MCP_GOVERNANCE_STORE).
#   docker build -t mcp-governance .
#   docker run -p 127.0.0.1:8000:8000 -v mcp-lockfiles:/data/lockfiles mcp-governance
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MCP_GOVERNANCE_LOCKFILES=/data/lockfiles

WORKDIR /srv/mcp-governance
COPY pyproject.toml README.md ./
COPY app ./app
COPY clients ./clients
RUN pip install ".[postgres]" \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin governance \
 && mkdir -p /data/lockfiles \
 && chown governance:governance /data/lockfiles

USER governance
VOLUME ["/data/lockfiles"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status != 200)"]

CMD ["mcp-governance", "serve", "--host", "0.0.0.0", "--port", "8000", "--lockfiles", "/data/lockfiles"]
