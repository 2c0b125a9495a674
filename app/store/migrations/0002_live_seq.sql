-- mcp-governance store schema, version 2: a live-report counter per server, so a replica can
-- check its cached live report with one small read (and a NOTIFY names the counter's value).
ALTER TABLE servers ADD COLUMN live_seq bigint NOT NULL DEFAULT 0;
