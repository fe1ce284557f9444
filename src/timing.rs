//! Wall-clock measurement shared by `adjit bench` and the benchmarks: the
//! median of repeated runs within a time budget.

use std::time::{Duration, Instant};

/// How many times to run a measured closure.
#[derive(Clone, Copy, Debug)]
pub struct Sampler {
    /// Runs made whatever the budget.
    pub min_runs: usize,
    /// Runs never exceeded.
    pub max_runs: usize,
    /// Further runs are made while the total time stays under this.
    pub budget: Duration,
}

impl Sampler {
    /// The setting of the benchmarks: at least 5 runs, up to 200 within 1 s.
    pub const BENCHMARK: Sampler = Sampler {
        min_runs: 5,
        max_runs: 200,
        budget: Duration::from_secs(1),
    };

    /// The median wall time of an infallible `f` in seconds.
    pub fn median_of(&self, mut f: impl FnMut()) -> f64 {
        self.median(|| {
            f();
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap_or_else(|never| match never {})
    }

    /// The median wall time of one call of `f` in seconds, timing calls in
    /// batches long enough (about `batch` each) that sub-microsecond calls
    /// are measured rather than the clock; the first error stops the
    /// measurement.
    pub fn median_batched<E>(
        &self,
        batch: Duration,
        mut f: impl FnMut() -> Result<(), E>,
    ) -> Result<f64, E> {
        let t = Instant::now();
        f()?;
        let once = t.elapsed().max(Duration::from_nanos(1));
        let reps = (batch.as_secs_f64() / once.as_secs_f64()).clamp(1.0, 1e6) as usize;
        let per_batch = self.median(|| {
            for _ in 0..reps {
                f()?;
            }
            Ok(())
        })?;
        Ok(per_batch / reps as f64)
    }

    /// The median wall time of `f` in seconds; the first error stops the
    /// measurement.
    pub fn median<E>(&self, mut f: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
        let mut samples = Vec::new();
        let start = Instant::now();
        while samples.len() < self.max_runs.max(1)
            && (samples.len() < self.min_runs || start.elapsed() < self.budget)
        {
            let t = Instant::now();
            f()?;
            samples.push(t.elapsed().as_secs_f64());
        }
        samples.sort_by(|a, b| a.total_cmp(b));
        Ok(samples[samples.len() / 2])
    }
}
