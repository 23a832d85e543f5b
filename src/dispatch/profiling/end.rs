//! A process's profile at its end (profiling I2, I3): the kept
//! translations written, the monitor drained, the profile built from its
//! snapshot and the second tier's outcome, then written, summarised and
//! merged into the store.
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;

use crate::dispatch::module_files::{
    module_table, prime_module_cache, reading_ahead, settle, unread,
};
use crate::dispatch::process::Process;
use crate::monitor::{MonitorInfo, Snapshot};
use crate::profile::{Ending, Inputs, Profile, Times};

impl Process {
    /// Drain the monitor and write the profile (I2). The process hotlift
    /// was asked to run, exiting when `hotlift paths` never found its
    /// function, exits 125 instead (cli/mod.rs: a bad option), the error
    /// said (paths/engine/mod.rs); so does one whose profile could not be
    /// written (I3).
    pub fn finish(&self, ending: Ending) {
        // kept/mod.rs K3. Not if a thread stopped holding the translation
        // lock (a fatal signal in the dispatcher): what it was doing is
        // not finished.
        let entries = match self.locked.try_lock() {
            Ok(mut l) => l.kept.take_entries(),
            Err(_) => Vec::new(),
        };
        crate::dispatch::kept::Kept::write(entries);
        let exit = matches!(ending, Ending::Exit { .. });
        let failed = self.finish_once(ending);
        // K6: with what ran, when the monitor was drained.
        if let Ok(mut l) = self.locked.try_lock() {
            let plan = l.kept.take_plan(&self.prof.blocks);
            crate::dispatch::kept::Kept::write(plan.into_iter().collect());
        }
        if exit && (failed.missing || failed.unwritten) {
            let process = self.prof.process.lock().unwrap_or_else(|e| e.into_inner());
            if (failed.missing && process.began == "program")
                || (failed.unwritten && !process.descendant())
            {
                // SAFETY: _exit has no preconditions; the profile is
                // written, or said to be unwritable (I3).
                unsafe { libc::_exit(crate::status::EXIT_HOTLIFT_FAILED) }
            }
        }
    }

    /// Read the files of the images mapped so far on a thread of their
    /// own while the guest runs (F7), when the profile will name them.
    pub fn read_files_ahead(&self) {
        let prof = &self.prof;
        let named = prof.profile_path().is_some()
            || prof.print_summary.load(Ordering::Acquire)
            || self.opts.perf_map
            || self.paths.is_some();
        if !named {
            return;
        }
        let core = prof
            .monitor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.info.monitor_core);
        crate::dispatch::module_files::read_ahead(&prof.images().records, core);
    }

    /// [`Self::finish`]'s work, done once.
    fn finish_once(&self, ending: Ending) -> Failed {
        let prof = &self.prof;
        let mut finished = prof.finished.lock().unwrap_or_else(|e| e.into_inner());
        if *finished {
            return Failed::default();
        }
        *finished = true;
        // The guest's limits must not cost its profile (limits.rs I1).
        crate::limits::lift();
        let ending_at = std::time::Instant::now();
        let summary = prof.print_summary.load(Ordering::Acquire);
        let path = prof.profile_path();
        let written = path.is_some() || summary || self.opts.perf_map;
        if !(written || self.paths.is_some() || prof.count_check || prof.store.is_some()) {
            return Failed::default();
        }
        let monitor = std::thread::scope(|s| {
            // The files' facts (symbols, the program's hash) do not depend
            // on the monitor's tables: what the read-ahead (F7) has not
            // read is read while the monitor drains, on the core the guest
            // has left (python's are 15 ms, its drain 20 to 80 ms).
            // module_table below finds them read. Only files not read yet:
            // a forked child finds its parent's (F6), and starting a
            // thread to find them read cost it more than the looking.
            let records = if written || self.paths.is_some() {
                unread(&prof.images().records)
            } else {
                Vec::new()
            };
            if !records.is_empty() || reading_ahead() {
                // No thread (a guest that lowered RLIMIT_NPROC): read them
                // after the drain, as before.
                let _ = std::thread::Builder::new()
                    .name("hotlift-files".into())
                    .spawn_scoped(s, move || {
                        settle();
                        prime_module_cache(&records)
                    });
            }
            prof.monitor
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
                .map(|m| (m.finish(), m.info.clone()))
        });
        // The second tier left what it made when the monitor finished.
        let tier = prof
            .tier
            .outcomes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let records = tier.as_ref().map_or(&[][..], |o| &o.records[..]);
        let inline_counts = |n: usize| -> Vec<Vec<u64>> {
            let Some(all) = &prof.inline else {
                return Vec::new();
            };
            all.lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                // SAFETY: each array holds BLOCK_CAPACITY zero-initialised
                // u64s; threads still running may add to them, which only
                // makes those reads approximate.
                .map(|c| unsafe { std::slice::from_raw_parts(c.0, n) }.to_vec())
                .collect()
        };
        let (snapshot, info, counting) = if let Some((t, info)) = monitor {
            (t, info, "ring")
        } else if let Some(all) = &prof.inline {
            let n = prof.blocks.len() as usize;
            let mut counts = vec![0u64; n];
            for c in all.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                // SAFETY: each array holds BLOCK_CAPACITY zero-initialised
                // u64s; threads still running may add to them, which only
                // makes those reads approximate.
                let part = unsafe { std::slice::from_raw_parts(c.0, n) };
                for (a, b) in counts.iter_mut().zip(part) {
                    *a += b;
                }
            }
            let mut snapshot = Snapshot::from_counts(&counts, n);
            snapshot.retired = prof.inline_retired();
            (snapshot, MonitorInfo::default(), "inline")
        } else if self.opts.perf_map {
            // --no-monitor: nothing counted, but the perf map needs only
            // the translations and the blocks' names.
            (
                Snapshot::from_counts(&[], prof.blocks.len() as usize),
                MonitorInfo::default(),
                "none",
            )
        } else {
            return Failed::default();
        };
        let missing = self.paths.as_ref().is_some_and(|p| {
            let (_, modules) = module_table(&prof.images());
            p.report(&snapshot, prof.blocks.published(), &modules)
        });
        let count_check = prof
            .count_check
            .then(|| prof.count_check(&snapshot, &inline_counts(prof.blocks.len() as usize)));
        // The store merges after the profile is written (store/run.rs I1).
        let merge = || {
            if let Some(s) = &prof.store {
                s.merge_at_exit(&snapshot, records, &prof.images());
            }
        };
        if !written {
            merge();
            return Failed {
                missing,
                unwritten: false,
            };
        }
        let drained_at = std::time::Instant::now();
        let (binary, modules) = module_table(&prof.images());
        let ring_capacity = if counting == "ring" {
            crate::monitor::ring::capacity_for(prof.ring_entries)
        } else {
            0
        };
        // The translation lock may be held by a thread that stopped for
        // good (the process is ending): do not wait for it. The
        // translations are read from the block table where the profile
        // lists them, not copied (a forked python child would copy its
        // parent's 38,000 to list the few hundred it ran).
        let (translate_ticks, kept_blocks, planned_blocks, fork_prepared_blocks) =
            match self.locked.try_lock() {
                Ok(l) => (
                    l.translate_ticks,
                    l.kept.placed,
                    l.kept.batched,
                    l.fork_paths.prepared,
                ),
                Err(_) => (0, 0, 0, 0),
            };
        let setup = prof
            .setup_seconds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or(0.0);
        let first_image = prof.process.lock().unwrap_or_else(|e| e.into_inner()).began == "program";
        let profile = Profile::build(Inputs {
            snapshot: &snapshot,
            tier: tier.as_ref(),
            blocks: prof.blocks.published(),
            binary,
            modules,
            command_line: prof.command_line.clone(),
            options: self.opts.for_profile(),
            counting,
            monitor: info.clone(),
            ending,
            times: Times {
                wall_seconds: prof
                    .started
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .elapsed()
                    .as_secs_f64(),
                process_cpu_seconds: crate::clock::process_cpu_seconds(),
                monitor_cpu_seconds: info.cpu_seconds,
                setup_seconds: setup,
                // A forked child's marks are its parent's (0 set-up); the
                // CPU clock an `execve` does not reset holds the image
                // before's run.
                startup: if setup > 0.0 {
                    let mut u = crate::profile::Startup::measured();
                    if !first_image {
                        u.before_main_cpu_seconds = 0.0;
                    }
                    u
                } else {
                    Default::default()
                },
                translation_seconds: crate::clock::ticks_seconds(translate_ticks),
                drain_seconds: (drained_at - ending_at).as_secs_f64(),
                profile_seconds: 0.0,
            },
            ring_capacity,
            // This process's own flushes (a forked child's generation
            // goes on from its parent's).
            flushes: self
                .flush_causes
                .iter()
                .map(|n| n.load(std::sync::atomic::Ordering::Relaxed))
                .sum(),
            translations: Some(&prof.blocks),
            inherited_blocks: prof.inherited_blocks.load(Ordering::Acquire),
            kept_blocks,
            planned_blocks,
            fork_prepared_blocks,
            translated: prof
                .blocks
                .seq()
                .saturating_sub(prof.inherited_seq.load(Ordering::Acquire)),
            block_base: prof.blocks.epoch_base(),
        });
        let mut profile = profile;
        profile.times.profile_seconds = drained_at.elapsed().as_secs_f64();
        profile.count_check = count_check;
        profile.code_cache_flushes_by_cause = crate::dispatch::process::FlushCause::ALL
            .iter()
            .map(|&c| {
                let n = self.flush_causes[c as usize].load(std::sync::atomic::Ordering::Relaxed);
                (c.name().into(), n)
            })
            .collect();
        profile.dispatcher = self.dispatch.snapshot();
        profile.store = prof.store.as_ref().map(|s| s.report(records));
        profile.process = Some(
            prof.process
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        );
        let held = prof.take_held_output();
        let unwritten = path.as_ref().is_some_and(|path| {
            profile
                .write_json(path)
                .or_else(|e| match &held {
                    // The guest dropped its privileges or chroot'ed: into
                    // the file opened as the image started (hold_output).
                    Some(f) => profile.write_json_into(f),
                    None => Err(e),
                })
                .map_err(|e| {
                    crate::host::say!(
                        "hotlift: cannot write the profile to {}: {e}",
                        path.display()
                    );
                })
                .is_err()
        });
        if summary || self.opts.perf_map {
            crate::profile::summary::at_exit(&profile, summary, self.opts.perf_map);
        }
        merge();
        // The process ends next: its memory goes with it, without
        // 100,000 frees of a python start-up's records.
        std::mem::forget(profile);
        Failed { missing, unwritten }
    }
}

/// What went wrong at the end that changes the exit status.
#[derive(Default)]
struct Failed {
    /// `hotlift paths` never found its function (paths/engine/mod.rs).
    missing: bool,
    /// The profile could not be written (I3).
    unwritten: bool,
}
