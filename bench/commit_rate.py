"""Raw commit rate of SQLite with the server's durability: WAL, synchronous=FULL,
one single-row INSERT and COMMIT per iteration, for SECONDS seconds. Python's
sqlite3 is Debian's libsqlite3, which syncs with fdatasync(); the server's
bundled SQLite is built to do the same (HAVE_FDATASYNC in .cargo/config.toml)."""
import sqlite3
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
conn = sqlite3.connect(path, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA synchronous=FULL")
# The settings the server's connections have, or no figure at all.
assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
n = 0
end = time.monotonic() + seconds
start = time.monotonic()
while time.monotonic() < end:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO t (v) VALUES (?)", ("x" * 64,))
    conn.execute("COMMIT")
    n += 1
print(f"{n / (time.monotonic() - start):.0f}")
