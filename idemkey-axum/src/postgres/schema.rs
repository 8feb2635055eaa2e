//! The key table on PostgreSQL (its first version: never changed, a change is
//! a new migration), the lock migrations run under, and the database's clock
//! as SQL.

/// Milliseconds since the epoch on the database's clock: lock ages and expiry
/// are judged by one clock however many hosts the instances run on.
/// `clock_timestamp()` (not `now()`) so a long transaction does not freeze it.
pub const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// Serialises migrations between instances.
pub const SCHEMA_LOCK: &str = "SELECT pg_advisory_xact_lock(7210452118)";

/// The key table and its indexes; `IF NOT EXISTS` everywhere. `charge_id`
/// holds [`Written::with_record_id`](crate::Written::with_record_id)'s id.
pub const KEYS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS idempotency_keys (
    customer        TEXT    NOT NULL,
    idem_key        TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    -- One id per operation: kept when a stale request is taken over, new when an
    -- expired key starts a new operation. The provider dedups on it.
    reservation     TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('in_progress', 'done')),
    lock_owner      TEXT    NOT NULL,
    locked_at       BIGINT  NOT NULL,
    created_at      BIGINT  NOT NULL,
    expires_at      BIGINT  NOT NULL,
    response_status INTEGER,
    response_type   TEXT,
    response_body   BYTEA,
    charge_id       TEXT,
    PRIMARY KEY (customer, idem_key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);
CREATE INDEX IF NOT EXISTS idempotency_keys_stale ON idempotency_keys (locked_at)
    WHERE state = 'in_progress';
";

/// Each key's route (keys stored before have none, `''`, and the first
/// route that asks for one adopts it; recovery scans one route's keys), and
/// the headers a stored answer names (a JSON array of pairs).
pub(crate) const ROUTES_AND_HEADERS: &str = "
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS route TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS response_headers TEXT;
CREATE INDEX IF NOT EXISTS idempotency_keys_route_stale ON idempotency_keys (route, locked_at)
    WHERE state = 'in_progress';
DROP INDEX IF EXISTS idempotency_keys_stale;
";

/// The key table without its `CHECK` on `state`. PostgreSQL builds a table's
/// `CHECK` expressions again for every statement that inserts or updates a
/// row (from their stored text, then planned), which cost each keyed
/// request's `INSERT` about as much as the rest of that statement did. Only
/// this crate writes `state`, from constants in its statements, and it reads
/// any value but `'done'` as in progress.
pub(crate) const NO_STATE_CHECK: &str =
    "ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS idempotency_keys_state_check";
