//! Versioned schema migrations, the same way for both stores: each store
//! lists its migrations in order, and a table `schema_migrations` records
//! which versions a database has, per scope (the server's tables, and the
//! provider stand-in's, which may share an SQLite file with them). At start the missing ones run, in order,
//! each in the transaction that records it, with other instances held off
//! (SQLite's write lock, PostgreSQL's advisory lock).
//!
//! Version 1 is the schema of 0.1.0, which created its tables with
//! `IF NOT EXISTS` and kept no version: on a database 0.1.0 made it changes
//! nothing and is only recorded, so such a database is adopted as it is.
//! A migration, once released, never changes; a new one gets the next
//! version.

/// One step of a store's schema.
#[derive(Debug)]
pub struct Migration {
    /// Its place in the order, from 1, without gaps.
    pub version: i64,
    /// What it does, as recorded.
    pub name: &'static str,
    /// Its statements, run in order.
    pub sql: &'static [&'static str],
}

/// The table of applied versions, in SQL both stores take.
pub const VERSIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    scope      TEXT   NOT NULL,
    version    BIGINT NOT NULL,
    name       TEXT   NOT NULL,
    applied_at BIGINT NOT NULL,
    PRIMARY KEY (scope, version)
)";

/// The migrations of `all` a database with `applied` versions still needs;
/// an error when it was migrated by newer code than this.
pub fn pending<'a>(all: &'a [Migration], applied: &[i64]) -> Result<Vec<&'a Migration>, String> {
    let known = all.last().map_or(0, |m| m.version);
    if let Some(newer) = applied.iter().copied().filter(|v| *v > known).max() {
        return Err(format!(
            "the database's schema is at version {newer}, newer than this code knows \
             ({known}): it was migrated by a newer release"
        ));
    }
    Ok(all
        .iter()
        .filter(|m| !applied.contains(&m.version))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[Migration] = &[
        Migration {
            version: 1,
            name: "a",
            sql: &[],
        },
        Migration {
            version: 2,
            name: "b",
            sql: &[],
        },
    ];

    #[test]
    fn only_the_missing_ones_run_in_order() {
        let v = |p: Vec<&Migration>| p.iter().map(|m| m.version).collect::<Vec<_>>();
        assert_eq!(v(pending(ALL, &[]).unwrap()), [1, 2]);
        assert_eq!(v(pending(ALL, &[1]).unwrap()), [2]);
        assert!(pending(ALL, &[1, 2]).unwrap().is_empty());
        let e = pending(ALL, &[1, 2, 3]).unwrap_err();
        assert!(e.contains("version 3") && e.contains("newer"), "{e}");
    }

    #[test]
    fn every_store_lists_versions_from_one_without_gaps() {
        let stores: [&[Migration]; 2] = [
            #[cfg(feature = "sqlite")]
            crate::sqlite::MIGRATIONS,
            #[cfg(not(feature = "sqlite"))]
            &[],
            #[cfg(feature = "postgres")]
            crate::postgres::MIGRATIONS,
            #[cfg(not(feature = "postgres"))]
            &[],
        ];
        for all in stores {
            for (i, m) in all.iter().enumerate() {
                assert_eq!(m.version, i as i64 + 1, "{}", m.name);
            }
        }
    }
}
