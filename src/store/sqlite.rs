//! The SQLite backend: the embedded default, one file.
//!
//! I1: every write is one `BEGIN IMMEDIATE` transaction (the writer lock
//!     is taken at its start, so two merges never both read the old
//!     counts), and a writer that finds the file locked waits up to
//!     [`super::WAIT`] (busy timeout).
//! I2: a file that is not an SQLite database, or an SQLite database with
//!     tables of its own but no `hotlift_meta`, is refused as not a store
//!     (never written to). A run reading at start opens the file
//!     read-only.

use std::path::Path;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};

use super::{
    Backend, Loaded, MergeOutcome, Open, ProgramKey, ProgramRow, Prune, PruneOutcome, StoreError,
    StoredTrace, TracePath, TraceRow, SCHEMA,
};

const CREATE: &str = "
CREATE TABLE hotlift_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE hotlift_programs (
    id INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated INTEGER NOT NULL
);
CREATE TABLE hotlift_traces (
    program INTEGER NOT NULL REFERENCES hotlift_programs(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    path TEXT NOT NULL,
    blocks INTEGER NOT NULL,
    count INTEGER NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    PRIMARY KEY (program, key)
);
";

pub struct SqliteStore {
    conn: Connection,
    what: String,
}

impl SqliteStore {
    pub fn open(path: &Path, how: Open) -> Result<SqliteStore, StoreError> {
        let what = path.display().to_string();
        let create = how == Open::Create;
        let exists = path.exists();
        if !exists && !create {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        if !exists {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| StoreError::Io(format!("cannot create {}: {e}", dir.display())))?;
            }
        }
        if path.is_dir() {
            return Err(StoreError::Corrupt {
                what,
                why: "a directory".into(),
            });
        }
        let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX
            | match how {
                Open::Create => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
                Open::Existing => OpenFlags::SQLITE_OPEN_READ_WRITE,
                Open::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY,
            };
        let conn = Connection::open_with_flags(path, flags).map_err(|e| err(&what, e))?;
        let mut s = SqliteStore { conn, what };
        s.conn
            .busy_timeout(super::WAIT)
            .map_err(|e| err(&s.what, e))?;
        s.conn
            .execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(|e| err(&s.what, e))?;
        s.ready(create)?;
        Ok(s)
    }

    /// Check the schema, making it first when asked (I2).
    fn ready(&mut self, create: bool) -> Result<(), StoreError> {
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let count = |c: &Connection, only_meta: bool| -> rusqlite::Result<i64> {
            c.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'
                 AND (?1 = 0 OR name = 'hotlift_meta')",
                [i64::from(only_meta)],
                |r| r.get(0),
            )
        };
        let foreign = || StoreError::Corrupt {
            what: what.clone(),
            why: "an SQLite database with other tables".into(),
        };
        if count(&self.conn, true).map_err(e)? == 0 {
            if count(&self.conn, false).map_err(e)? > 0 {
                return Err(foreign());
            }
            if !create {
                return Err(StoreError::Empty(what.clone()));
            }
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(e)?;
            if count(&tx, true).map_err(e)? == 0 {
                if count(&tx, false).map_err(e)? > 0 {
                    return Err(foreign());
                }
                tx.execute_batch(CREATE).map_err(e)?;
                tx.execute(
                    "INSERT INTO hotlift_meta (key, value) VALUES ('schema', ?1)",
                    [SCHEMA.to_string()],
                )
                .map_err(e)?;
            }
            tx.commit().map_err(e)?;
        }
        let found: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM hotlift_meta WHERE key = 'schema'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(e)?;
        match found {
            Some(v) if v == SCHEMA.to_string() => Ok(()),
            other => Err(StoreError::Schema {
                what: what.clone(),
                found: other.unwrap_or_else(|| "none".into()),
            }),
        }
    }

    fn program_id(&self, identity: &str) -> Result<Option<(i64, i64)>, StoreError> {
        self.conn
            .query_row(
                "SELECT id, version FROM hotlift_programs WHERE identity = ?1",
                [identity],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| err(&self.what, e))
    }
}

/// A corrupt or foreign file is named as such (I2); anything else is the
/// database's own message.
fn err(what: &str, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            what: what.into(),
            why: super::one_line(&e),
        },
        _ => StoreError::Sqlite {
            what: what.into(),
            why: super::one_line(&e),
        },
    }
}

impl Backend for SqliteStore {
    fn merge(
        &mut self,
        program: &ProgramKey,
        traces: &[TracePath],
        now: i64,
    ) -> Result<MergeOutcome, StoreError> {
        let what = self.what.clone();
        let e = |x| err(&what, x);
        // I1: the writer lock from the first statement on.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let (id, version): (i64, i64) = tx
            .query_row(
                "INSERT INTO hotlift_programs (identity, name, version, updated)
                 VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (identity) DO UPDATE SET
                     version = hotlift_programs.version + 1,
                     name = excluded.name,
                     updated = excluded.updated
                 RETURNING id, version",
                params![program.identity, program.name, now],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(e)?;
        let mut out = MergeOutcome {
            version: version as u64,
            ..MergeOutcome::default()
        };
        {
            let mut st = tx
                .prepare(
                    "INSERT INTO hotlift_traces
                         (program, key, path, blocks, count, first_seen, last_seen)
                     VALUES (?1, ?2, ?3, ?4, 1, ?5, ?5)
                     ON CONFLICT (program, key) DO UPDATE SET
                         count = hotlift_traces.count + 1,
                         last_seen = excluded.last_seen
                     RETURNING count",
                )
                .map_err(e)?;
            for t in traces {
                let count: i64 = st
                    .query_row(
                        params![id, t.key(), t.to_json(), t.members.len() as i64, now],
                        |r| r.get(0),
                    )
                    .map_err(e)?;
                if count == 1 {
                    out.new_traces += 1;
                } else {
                    out.known_traces += 1;
                }
            }
        }
        tx.commit().map_err(e)?;
        Ok(out)
    }

    fn load(
        &mut self,
        identity: &str,
        have: u64,
        min_count: u64,
    ) -> Result<Option<Loaded>, StoreError> {
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let tx = self.conn.transaction().map_err(e)?;
        let found: Option<(i64, i64)> = tx
            .query_row(
                "SELECT id, version FROM hotlift_programs WHERE identity = ?1",
                [identity],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(e)?;
        let Some((id, version)) = found else {
            return Ok(None);
        };
        if version as u64 <= have {
            return Ok(None);
        }
        let mut loaded = Loaded {
            version: version as u64,
            ..Loaded::default()
        };
        {
            let mut st = tx
                .prepare(
                    "SELECT path, count FROM hotlift_traces
                     WHERE program = ?1 AND count >= ?2
                     ORDER BY count DESC, first_seen, key",
                )
                .map_err(e)?;
            let rows = st
                .query_map(params![id, min_count as i64], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                })
                .map_err(e)?;
            for row in rows {
                let (text, count) = row.map_err(e)?;
                match TracePath::from_json(&text) {
                    Ok(path) => loaded.traces.push(StoredTrace {
                        path,
                        count: count.max(0) as u64,
                    }),
                    Err(_) => loaded.unreadable += 1,
                }
            }
        }
        tx.commit().map_err(e)?;
        Ok(Some(loaded))
    }

    fn programs(&mut self) -> Result<Vec<ProgramRow>, StoreError> {
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let mut st = self
            .conn
            .prepare(
                "SELECT p.identity, p.name, p.version, p.updated,
                        (SELECT count(*) FROM hotlift_traces t WHERE t.program = p.id)
                 FROM hotlift_programs p ORDER BY p.name, p.identity",
            )
            .map_err(e)?;
        let rows = st
            .query_map([], |r| {
                Ok(ProgramRow {
                    identity: r.get(0)?,
                    name: r.get(1)?,
                    version: r.get::<_, i64>(2)?.max(0) as u64,
                    updated: r.get(3)?,
                    traces: r.get::<_, i64>(4)?.max(0) as u64,
                })
            })
            .map_err(e)?;
        rows.collect::<Result<_, _>>().map_err(e)
    }

    fn traces(&mut self, identity: &str) -> Result<Vec<TraceRow>, StoreError> {
        let Some((id, _)) = self.program_id(identity)? else {
            return Err(StoreError::UnknownProgram(identity.into()));
        };
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let mut st = self
            .conn
            .prepare(
                "SELECT key, path, count, first_seen, last_seen FROM hotlift_traces
                 WHERE program = ?1 ORDER BY count DESC, first_seen, key",
            )
            .map_err(e)?;
        let rows = st
            .query_map([id], |r| {
                Ok(TraceRow {
                    key: r.get(0)?,
                    path: TracePath::from_json(&r.get::<_, String>(1)?),
                    count: r.get::<_, i64>(2)?.max(0) as u64,
                    first_seen: r.get(3)?,
                    last_seen: r.get(4)?,
                })
            })
            .map_err(e)?;
        rows.collect::<Result<_, _>>().map_err(e)
    }

    fn prune(&mut self, p: &Prune, now: i64) -> Result<PruneOutcome, StoreError> {
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let mut out = PruneOutcome::default();
        let program = match &p.program {
            Some(identity) => Some(
                tx.query_row(
                    "SELECT id FROM hotlift_programs WHERE identity = ?1",
                    [identity],
                    |r| r.get::<_, i64>(0),
                )
                .optional()
                .map_err(e)?
                .ok_or_else(|| StoreError::UnknownProgram(identity.clone()))?,
            ),
            None => None,
        };
        if let (Some(id), None, None) = (program, p.below, p.before) {
            out.traces = tx
                .execute("DELETE FROM hotlift_traces WHERE program = ?1", [id])
                .map_err(e)? as u64;
            out.programs = tx
                .execute("DELETE FROM hotlift_programs WHERE id = ?1", [id])
                .map_err(e)? as u64;
        } else {
            // The programs that lose traces get a new version.
            let filter = "(?1 IS NULL OR program = ?1)
                          AND (?2 IS NULL OR count < ?2)
                          AND (?3 IS NULL OR last_seen < ?3)";
            let args = params![program, p.below.map(|b| b as i64), p.before];
            tx.execute(
                &format!(
                    "UPDATE hotlift_programs SET version = version + 1, updated = ?4
                     WHERE id IN (SELECT program FROM hotlift_traces WHERE {filter})"
                ),
                params![program, p.below.map(|b| b as i64), p.before, now],
            )
            .map_err(e)?;
            out.traces = tx
                .execute(&format!("DELETE FROM hotlift_traces WHERE {filter}"), args)
                .map_err(e)? as u64;
        }
        tx.commit().map_err(e)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{code_hash, ModuleRef, PathMember, Store};

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("hotlift-sqlite-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("store.db")
    }

    fn trace(offset: u64) -> TracePath {
        TracePath {
            modules: vec![ModuleRef {
                identity: "build-id:77".into(),
                name: "p".into(),
            }],
            members: vec![PathMember {
                module: 0,
                offset,
                size: 3,
                insns: 1,
                code: code_hash(&offset.to_le_bytes()),
                symbol: None,
            }],
        }
    }

    fn prog() -> ProgramKey {
        ProgramKey {
            identity: "build-id:77".into(),
            name: "p".into(),
        }
    }

    #[test]
    fn other_schemas_and_unreadable_rows() {
        let db = temp("schema");
        let mut s = Store::open(db.to_str().unwrap(), Open::Create).unwrap();
        s.merge(&prog(), &[trace(1), trace(2)]).unwrap();
        drop(s);
        let c = Connection::open(&db).unwrap();
        c.execute(
            "UPDATE hotlift_traces SET path = '{\"modules\":[]}' WHERE key = ?1",
            [trace(2).key()],
        )
        .unwrap();
        let mut s = Store::open(db.to_str().unwrap(), Open::Existing).unwrap();
        let l = s.load(&prog().identity, 0, 1).unwrap().unwrap();
        assert_eq!(
            (l.traces.len(), l.unreadable),
            (1, 1),
            "a bad row is skipped"
        );
        c.execute(
            "UPDATE hotlift_meta SET value = '9' WHERE key = 'schema'",
            [],
        )
        .unwrap();
        let e = Store::open(db.to_str().unwrap(), Open::Existing).unwrap_err();
        assert!(matches!(e, StoreError::Schema { .. }), "{e}");
        assert!(e.to_string().contains("store schema 9"), "{e}");
    }

    #[test]
    fn threads_merging_at_once_lose_nothing() {
        let db = temp("threads");
        let url = db.to_str().unwrap().to_string();
        Store::open(&url, Open::Create).unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let url = url.clone();
                std::thread::spawn(move || {
                    let mut s = Store::open(&url, Open::Create).unwrap();
                    for _ in 0..25 {
                        s.merge(&prog(), &[trace(1), trace(2)]).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut s = Store::open(&url, Open::Existing).unwrap();
        let l = s.load(&prog().identity, 0, 1).unwrap().unwrap();
        assert_eq!(l.version, 200);
        assert!(l.traces.iter().all(|t| t.count == 200));
    }
}
