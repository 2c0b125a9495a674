-- mcp-governance store schema, version 1.
-- Records are JSON kept as text (jsonb refuses \u0000, which a hostile surface may carry).
-- servers: one row per server; last_version is what a commit is conditional on (read FOR UPDATE),
-- seq grows with every change of the server (lock, live report, refused attempt) and travels in the
-- NOTIFY that tells replicas to drop their cached copy.
CREATE TABLE servers (
    name         text PRIMARY KEY,
    last_version integer NOT NULL DEFAULT 0 CHECK (last_version >= 0),
    seq          bigint  NOT NULL DEFAULT 0
);

-- Every accepted version, immutable; its record is the audit-log line, lock_text the exact TOML bytes.
CREATE TABLE versions (
    server           text    NOT NULL REFERENCES servers (name),
    version          integer NOT NULL CHECK (version > 0),
    integrity_digest text    NOT NULL,
    record           text    NOT NULL,
    lock_text        bytea   NOT NULL,
    PRIMARY KEY (server, version)
);

CREATE FUNCTION mcp_governance_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'mcp-governance: % on % refused: versions and the audit log are append-only',
        TG_OP, TG_TABLE_NAME;
END
$$;

CREATE TRIGGER versions_append_only BEFORE UPDATE OR DELETE ON versions
    FOR EACH ROW EXECUTE FUNCTION mcp_governance_append_only();
CREATE TRIGGER versions_no_truncate BEFORE TRUNCATE ON versions
    FOR EACH STATEMENT EXECUTE FUNCTION mcp_governance_append_only();

-- The last live surface each instance of a server reported ('' : an instance that did not name itself).
CREATE TABLE live_reports (
    server      text NOT NULL REFERENCES servers (name),
    instance    text NOT NULL DEFAULT '',
    reported_at text NOT NULL,
    record      text NOT NULL,
    PRIMARY KEY (server, instance)
);

-- Lock attempts refused for BREAKING changes, kept for approval (the newest 20 per server).
CREATE TABLE refused_attempts (
    server       text NOT NULL REFERENCES servers (name),
    id           text NOT NULL,
    attempted_at text NOT NULL,
    record       text NOT NULL,
    PRIMARY KEY (server, id)
);
