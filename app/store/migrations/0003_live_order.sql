-- mcp-governance store schema, version 3: the order live reports were written in, so the
-- server's last report is the last one written even when two came within the same second.
ALTER TABLE live_reports ADD COLUMN seq bigint NOT NULL DEFAULT 0;
