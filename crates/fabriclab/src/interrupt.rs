//! Stoppable runs: [`sim::run`](crate::sim::run) whose progress callback may
//! ask the run to stop (Ctrl-C in the CLI, KeyboardInterrupt in Python).

use crate::config::{Config, ConfigError};
use crate::sim::{run, RunOutput};
use crate::Time;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// The unwinding payload that carries a stop request out of the event loop.
struct Stopped;

/// Like [`run`], but `progress(now, end)` may return `ControlFlow::Break` to
/// stop the run; then the partial run is dropped and `Ok(None)` returned.
///
/// The stop unwinds out of the event loop (through `resume_unwind`, so no
/// panic message is printed), which keeps the loop itself free of any extra
/// check: the callback is called every few hundred thousand events only.
/// Other panics pass through unchanged.
pub fn run_stoppable(
    cfg: &Config,
    progress: &mut dyn FnMut(Time, Time) -> ControlFlow<()>,
) -> Result<Option<RunOutput>, ConfigError> {
    let mut check = |now, end| {
        if progress(now, end).is_break() {
            resume_unwind(Box::new(Stopped));
        }
    };
    match catch_unwind(AssertUnwindSafe(|| run(cfg, &mut check))) {
        Ok(r) => r.map(Some),
        Err(payload) if payload.is::<Stopped>() => Ok(None),
        Err(payload) => resume_unwind(payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        // About a million events: several progress calls.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/quickstart.toml");
        let set = ["run.duration_ms=0.6".into(), "run.warmup_ms=0.1".into()];
        Config::load(std::path::Path::new(path), &set).expect("valid config")
    }

    #[test]
    fn break_stops_the_run_at_the_first_progress_call() {
        let mut calls = 0;
        let r = run_stoppable(&cfg(), &mut |_, _| {
            calls += 1;
            ControlFlow::Break(())
        });
        assert!(matches!(r, Ok(None)));
        assert_eq!(calls, 1);
    }

    #[test]
    fn continue_gives_the_same_summary_as_run() {
        let c = cfg();
        let a = run_stoppable(&c, &mut |_, _| ControlFlow::Continue(())).unwrap().unwrap();
        let b = run(&c, &mut |_, _| {}).unwrap();
        assert_eq!(a.summary.events, b.summary.events);
        assert_eq!(a.summary.goodput_gbps, b.summary.goodput_gbps);
        assert_eq!(a.messages.len(), b.messages.len());
    }
}
