//! The PostgreSQL backend: one store shared by a team on an existing
//! server, with the SQLite backend's schema (store I4).
//!
//! I1: a merge is one transaction whose first statement upserts the
//!     program row, so concurrent merges of one program queue on that
//!     row's lock; traces are upserted in key order (`ON CONFLICT … DO
//!     UPDATE SET count = count + 1`), so no count is lost and no two
//!     merges wait on each other in a cycle. A transaction the server
//!     aborts anyway (deadlock, serialization) is retried.
//! I2: the tables are made under a transaction-scoped advisory lock, so
//!     runs that find an empty database at once do not race on
//!     `CREATE TABLE`.
//! I3: a connection attempt gives up after [`super::CONNECT_TIMEOUT`]
//!     unless the URL sets `connect_timeout`, as libpq's does: the whole
//!     attempt (TCP, the start-up handshake, authentication), not only the
//!     TCP connect the driver bounds, so a server that accepts and never
//!     answers cannot hang a run or a command. Statements and lock waits
//!     are bounded by the server (`statement_timeout`, `lock_timeout`:
//!     [`super::WAIT`] each).

use postgres::error::SqlState;
use postgres::{Client, IsolationLevel, NoTls, Transaction};

use super::{
    Backend, Loaded, MergeOutcome, Open, ProgramKey, ProgramRow, Prune, PruneOutcome, StoreError,
    StoredTrace, TracePath, TraceRow, SCHEMA,
};

/// An arbitrary constant: the advisory lock that guards making the tables.
const SCHEMA_LOCK: i64 = 0x0068_6f74_6c69_6674;

const CREATE: &str = "
CREATE TABLE IF NOT EXISTS hotlift_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hotlift_programs (
    id BIGSERIAL PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    version BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS hotlift_traces (
    program BIGINT NOT NULL REFERENCES hotlift_programs(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    path TEXT NOT NULL,
    blocks BIGINT NOT NULL,
    count BIGINT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    PRIMARY KEY (program, key)
);
";

/// Attempts at a transaction the server aborted (I1).
const TRIES: usize = 5;

pub struct PgStore {
    client: Client,
    what: String,
}

fn err(what: &str, e: postgres::Error) -> StoreError {
    // The server's own message (with its detail) is more useful than the
    // client's summary ("db error").
    let why = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    };
    StoreError::Postgres {
        what: what.into(),
        why: super::one_line(why),
    }
}

fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// Connect on a thread of its own, giving up after `limit` (I3): None
/// when the server did not answer in time (the thread is left to the
/// blocked socket; the process ends or goes on without the store).
fn connect_within(
    cfg: postgres::Config,
    limit: std::time::Duration,
) -> Result<Client, Option<postgres::Error>> {
    let (tx, rx) = std::sync::mpsc::channel();
    // Every signal blocked, as on the store's reader thread (run.rs I4).
    let spawned = crate::own_thread::spawn_blocked("hotlift-pg", move || {
        let _ = tx.send(cfg.connect(NoTls));
    });
    if spawned.is_err() {
        return Err(None);
    }
    match rx.recv_timeout(limit) {
        Ok(r) => r.map_err(Some),
        Err(_) => Err(None),
    }
}

impl PgStore {
    pub fn open(url: &str, what: &str, how: Open) -> Result<PgStore, StoreError> {
        let mut cfg: postgres::Config = url.parse().map_err(|e| StoreError::BadUrl {
            url: what.into(),
            why: super::one_line(e),
        })?;
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(super::CONNECT_TIMEOUT);
        }
        let limit = cfg
            .get_connect_timeout()
            .copied()
            .unwrap_or(super::CONNECT_TIMEOUT);
        let wait_ms = super::WAIT.as_millis();
        let options = format!(
            "{} -c statement_timeout={wait_ms} -c lock_timeout={wait_ms}",
            cfg.get_options().unwrap_or("")
        );
        cfg.options(options.trim_start());
        let client = connect_within(cfg, limit).map_err(|e| match e {
            Some(e) => err(what, e),
            None => StoreError::Postgres {
                what: what.into(),
                why: format!("no answer from the server within {} s", limit.as_secs_f64()),
            },
        })?;
        let mut s = PgStore {
            client,
            what: what.into(),
        };
        s.ready(how == Open::Create)?;
        Ok(s)
    }

    /// Check the schema, making it first when asked (I2).
    fn ready(&mut self, create: bool) -> Result<(), StoreError> {
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let exists: bool = self
            .client
            .query_one("SELECT to_regclass('hotlift_meta') IS NOT NULL", &[])
            .map_err(e)?
            .get(0);
        if !exists {
            if !create {
                return Err(StoreError::Empty(what.clone()));
            }
            let mut tx = self.client.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
                .map_err(e)?;
            tx.batch_execute(CREATE).map_err(e)?;
            tx.execute(
                "INSERT INTO hotlift_meta (key, value) VALUES ('schema', $1)
                 ON CONFLICT (key) DO NOTHING",
                &[&SCHEMA.to_string()],
            )
            .map_err(e)?;
            tx.commit().map_err(e)?;
        }
        let found: Option<String> = self
            .client
            .query_opt("SELECT value FROM hotlift_meta WHERE key = 'schema'", &[])
            .map_err(e)?
            .map(|r| r.get(0));
        match found {
            Some(v) if v == SCHEMA.to_string() => Ok(()),
            other => Err(StoreError::Schema {
                what: what.clone(),
                found: other.unwrap_or_else(|| "none".into()),
            }),
        }
    }

    fn program_id(&mut self, identity: &str) -> Result<Option<i64>, StoreError> {
        let what = self.what.clone();
        Ok(self
            .client
            .query_opt(
                "SELECT id FROM hotlift_programs WHERE identity = $1",
                &[&identity],
            )
            .map_err(|e| err(&what, e))?
            .map(|r| r.get(0)))
    }
}

fn merge_once(
    tx: &mut Transaction<'_>,
    program: &ProgramKey,
    traces: &[(String, &TracePath)],
    now: i64,
) -> Result<MergeOutcome, postgres::Error> {
    let row = tx.query_one(
        "INSERT INTO hotlift_programs (identity, name, version, updated)
         VALUES ($1, $2, 1, $3)
         ON CONFLICT (identity) DO UPDATE SET
             version = hotlift_programs.version + 1,
             name = excluded.name,
             updated = excluded.updated
         RETURNING id, version",
        &[&program.identity, &program.name, &now],
    )?;
    let (id, version): (i64, i64) = (row.get(0), row.get(1));
    let mut out = MergeOutcome {
        version: version as u64,
        ..MergeOutcome::default()
    };
    let st = tx.prepare(
        "INSERT INTO hotlift_traces (program, key, path, blocks, count, first_seen, last_seen)
         VALUES ($1, $2, $3, $4, 1, $5, $5)
         ON CONFLICT (program, key) DO UPDATE SET
             count = hotlift_traces.count + 1,
             last_seen = excluded.last_seen
         RETURNING count",
    )?;
    for (key, t) in traces {
        let blocks = t.members.len() as i64;
        let count: i64 = tx
            .query_one(&st, &[&id, key, &t.to_json(), &blocks, &now])?
            .get(0);
        if count == 1 {
            out.new_traces += 1;
        } else {
            out.known_traces += 1;
        }
    }
    Ok(out)
}

impl Backend for PgStore {
    fn merge(
        &mut self,
        program: &ProgramKey,
        traces: &[TracePath],
        now: i64,
    ) -> Result<MergeOutcome, StoreError> {
        // I1: one lock order for every merge.
        let mut keyed: Vec<(String, &TracePath)> = traces.iter().map(|t| (t.key(), t)).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let what = self.what.clone();
        let mut tries = 0;
        loop {
            tries += 1;
            let mut tx = self.client.transaction().map_err(|e| err(&what, e))?;
            let r = merge_once(&mut tx, program, &keyed, now).and_then(|out| {
                tx.commit()?;
                Ok(out)
            });
            match r {
                Ok(out) => return Ok(out),
                Err(e) if retryable(&e) && tries < TRIES => continue,
                Err(e) => return Err(err(&what, e)),
            }
        }
    }

    fn load(
        &mut self,
        identity: &str,
        have: u64,
        min_count: u64,
    ) -> Result<Option<Loaded>, StoreError> {
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(e)?;
        let Some(row) = tx
            .query_opt(
                "SELECT id, version FROM hotlift_programs WHERE identity = $1",
                &[&identity],
            )
            .map_err(e)?
        else {
            return Ok(None);
        };
        let (id, version): (i64, i64) = (row.get(0), row.get(1));
        if version as u64 <= have {
            return Ok(None);
        }
        let mut loaded = Loaded {
            version: version as u64,
            ..Loaded::default()
        };
        let rows = tx
            .query(
                "SELECT path, count FROM hotlift_traces
                 WHERE program = $1 AND count >= $2
                 ORDER BY count DESC, first_seen, key",
                &[&id, &(min_count as i64)],
            )
            .map_err(e)?;
        for r in rows {
            let text: String = r.get(0);
            let count: i64 = r.get(1);
            match TracePath::from_json(&text) {
                Ok(path) => loaded.traces.push(StoredTrace {
                    path,
                    count: count.max(0) as u64,
                }),
                Err(_) => loaded.unreadable += 1,
            }
        }
        tx.commit().map_err(e)?;
        Ok(Some(loaded))
    }

    fn programs(&mut self) -> Result<Vec<ProgramRow>, StoreError> {
        let what = self.what.clone();
        let rows = self
            .client
            .query(
                "SELECT p.identity, p.name, p.version, p.updated,
                        (SELECT count(*) FROM hotlift_traces t WHERE t.program = p.id)
                 FROM hotlift_programs p ORDER BY p.name, p.identity",
                &[],
            )
            .map_err(|e| err(&what, e))?;
        Ok(rows
            .iter()
            .map(|r| ProgramRow {
                identity: r.get(0),
                name: r.get(1),
                version: r.get::<_, i64>(2).max(0) as u64,
                updated: r.get(3),
                traces: r.get::<_, i64>(4).max(0) as u64,
            })
            .collect())
    }

    fn traces(&mut self, identity: &str) -> Result<Vec<TraceRow>, StoreError> {
        let Some(id) = self.program_id(identity)? else {
            return Err(StoreError::UnknownProgram(identity.into()));
        };
        let what = self.what.clone();
        let rows = self
            .client
            .query(
                "SELECT key, path, count, first_seen, last_seen FROM hotlift_traces
                 WHERE program = $1 ORDER BY count DESC, first_seen, key",
                &[&id],
            )
            .map_err(|e| err(&what, e))?;
        Ok(rows
            .iter()
            .map(|r| TraceRow {
                key: r.get(0),
                path: TracePath::from_json(r.get::<_, &str>(1)),
                count: r.get::<_, i64>(2).max(0) as u64,
                first_seen: r.get(3),
                last_seen: r.get(4),
            })
            .collect())
    }

    fn prune(&mut self, p: &Prune, now: i64) -> Result<PruneOutcome, StoreError> {
        let program = match &p.program {
            Some(identity) => Some(
                self.program_id(identity)?
                    .ok_or_else(|| StoreError::UnknownProgram(identity.clone()))?,
            ),
            None => None,
        };
        let what = self.what.clone();
        let e = |x| err(&what, x);
        let mut tx = self.client.transaction().map_err(e)?;
        let mut out = PruneOutcome::default();
        if let (Some(id), None, None) = (program, p.below, p.before) {
            out.traces = tx
                .execute("DELETE FROM hotlift_traces WHERE program = $1", &[&id])
                .map_err(e)?;
            out.programs = tx
                .execute("DELETE FROM hotlift_programs WHERE id = $1", &[&id])
                .map_err(e)?;
        } else {
            let below = p.below.map(|b| b as i64);
            let filter = "($1::BIGINT IS NULL OR program = $1)
                          AND ($2::BIGINT IS NULL OR count < $2)
                          AND ($3::BIGINT IS NULL OR last_seen < $3)";
            tx.execute(
                &format!(
                    "UPDATE hotlift_programs SET version = version + 1, updated = $4
                     WHERE id IN (SELECT program FROM hotlift_traces WHERE {filter})"
                ),
                &[&program, &below, &p.before, &now],
            )
            .map_err(e)?;
            out.traces = tx
                .execute(
                    &format!("DELETE FROM hotlift_traces WHERE {filter}"),
                    &[&program, &below, &p.before],
                )
                .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(out)
    }
}
