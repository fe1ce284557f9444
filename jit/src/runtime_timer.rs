//! The time limits of calls: one process-wide timer thread that raises a
//! call's interrupt flag ([`crate::runtime::RuntimeCtx::interrupt`]) when its
//! deadline passes. Generated code compiled with time checks reads the flag
//! at every loop back-edge (a load and a branch, no call), so an armed limit
//! costs nothing more than an unarmed one.
//!
//! An [`Alarm`] is the registration of one flag; dropping it disarms it.
//! The timer writes a flag only while holding the lock under which alarms
//! are disarmed, so a flag is never written after its alarm is dropped.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Instant;

/// One armed deadline: the flag's address and the alarm's id.
struct Entry {
    deadline: Instant,
    flag: usize,
    id: u64,
}

/// The alarms waiting and the condition the timer thread waits on.
struct Timer {
    entries: Mutex<(Vec<Entry>, u64)>,
    changed: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let t: &'static Timer = Box::leak(Box::new(Timer {
            entries: Mutex::new((Vec::new(), 0)),
            changed: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("adjit-timer".into())
            .spawn(move || run(t))
            .expect("the timer thread starts");
        t
    })
}

/// The timer thread: raises each flag at its deadline.
fn run(t: &'static Timer) {
    let mut guard = t.entries.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        guard.0.retain(|e| {
            if e.deadline <= now {
                // SAFETY: the entry is still registered (we hold the lock
                // its Alarm's drop takes before the flag can go away), so
                // `flag` is the address of a live AtomicI64.
                unsafe { &*(e.flag as *const AtomicI64) }.store(1, Ordering::SeqCst);
                false
            } else {
                true
            }
        });
        let next = guard.0.iter().map(|e| e.deadline).min();
        guard = match next {
            Some(d) => {
                t.changed
                    .wait_timeout(guard, d.saturating_duration_since(now))
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            None => t.changed.wait(guard).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// A registered deadline for one flag; disarmed on drop.
#[derive(Debug)]
pub struct Alarm {
    id: u64,
}

impl Alarm {
    /// Raises `flag` (stores 1) at `deadline` unless the alarm is dropped
    /// first. The flag must outlive the alarm.
    pub fn arm(deadline: Instant, flag: &AtomicI64) -> Alarm {
        let t = timer();
        let mut guard = t.entries.lock().unwrap_or_else(|e| e.into_inner());
        guard.1 += 1;
        let id = guard.1;
        guard.0.push(Entry {
            deadline,
            flag: flag as *const AtomicI64 as usize,
            id,
        });
        t.changed.notify_one();
        Alarm { id }
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        let t = timer();
        let mut guard = t.entries.lock().unwrap_or_else(|e| e.into_inner());
        guard.0.retain(|e| e.id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn raises_the_flag_at_the_deadline_and_not_after_a_drop() {
        let late = AtomicI64::new(0);
        let early = AtomicI64::new(0);
        let dropped = Alarm::arm(Instant::now() + Duration::from_millis(30), &early);
        let _kept = Alarm::arm(Instant::now() + Duration::from_millis(30), &late);
        drop(dropped);
        let start = Instant::now();
        while late.load(Ordering::SeqCst) == 0 && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(late.load(Ordering::SeqCst), 1);
        assert!(start.elapsed() >= Duration::from_millis(20));
        assert_eq!(early.load(Ordering::SeqCst), 0);
    }
}
