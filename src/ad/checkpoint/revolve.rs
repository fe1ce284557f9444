//! Griewank and Walther's binomial reversal schedule ("revolve"): how many
//! forward steps reversing `l` steps costs with `s` snapshots, and where the
//! optimal schedule takes its next snapshot.
//!
//! With `s` snapshots (the one of the initial state included) the optimal
//! reversal of `l` steps advances `t(l, s) = r·l − β(s+1, r−1)` steps
//! (recording steps not counted), where `β(s, r) = C(s+r, s)` and the
//! repetition number `r` is the least one with `β(s, r) ≥ l` (Griewank and
//! Walther, *Evaluating Derivatives*, 2nd ed., Prop. 12.6). The schedule is
//! recursive: advance `m` steps from the start, snapshot, reverse the last
//! `l − m` steps with `s − 1` snapshots, restore the start, reverse the
//! first `m` steps with `s` snapshots. [`split`] gives an `m` for which this
//! costs exactly `t(l, s)`; the generated code evaluates the same function
//! (see `super::emit_split`).

/// `β(s, r) = C(s + r, s)` (0 for a negative argument), saturating.
pub fn beta(s: i64, r: i64) -> u64 {
    if s < 0 || r < 0 {
        return 0;
    }
    let (s, r) = (s as u64, r as u64);
    let k = s.min(r);
    let mut acc: u64 = 1;
    for i in 1..=k {
        // C(n, i) = C(n, i-1) * (n - i + 1) / i, exact at every step.
        acc = match acc.checked_mul(s + r - k + i) {
            Some(x) => x / i,
            None => return u64::MAX,
        };
    }
    acc
}

/// The repetition number: the least `r` with `β(s, r) ≥ l` (`s ≥ 1`).
pub fn repetitions(l: u64, s: u64) -> u64 {
    let mut r = 0;
    while beta(s as i64, r as i64) < l {
        r += 1;
    }
    r
}

/// Forward steps (advances) of the optimal reversal of `l` steps with `s`
/// snapshots: `t(l, s) = r·l − β(s+1, r−1)`. Zero for `l ≤ 1`.
pub fn optimal_advances(l: u64, s: u64) -> u64 {
    if l <= 1 {
        return 0;
    }
    let s = s.max(1);
    let r = repetitions(l, s);
    r * l - beta(s as i64 + 1, r as i64 - 1)
}

/// Where the optimal schedule for `l ≥ 2` steps and `s ≥ 1` snapshots takes
/// its next snapshot, as a number of steps from the start (`1 ≤ m < l`):
/// `m = max(1, l − β(s−1, r), β(s, r−2))` (with one snapshot, `l − 1`).
pub fn split(l: u64, s: u64) -> u64 {
    if s <= 1 {
        return l - 1;
    }
    let r = repetitions(l, s) as i64;
    let s = s as i64;
    let a = l.saturating_sub(beta(s - 1, r));
    a.max(beta(s, r - 2)).clamp(1, l - 1)
}

/// Advances the schedule of [`split`] performs, counted by simulating its
/// recursion (the one the generated code runs).
pub fn simulated_advances(l: u64, s: u64) -> u64 {
    if l <= 1 {
        return 0;
    }
    let m = split(l, s);
    // With one snapshot `l - m` is 1: no snapshot is needed for it.
    m + simulated_advances(l - m, s.saturating_sub(1).max(1)) + simulated_advances(m, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The minimal advances by dynamic programming over every split.
    fn brute_force(lmax: usize, smax: usize) -> Vec<Vec<u64>> {
        let mut t = vec![vec![0u64; smax + 1]; lmax + 1];
        for l in 2..=lmax {
            t[l][1] = (l * (l - 1) / 2) as u64;
            for s in 2..=smax {
                t[l][s] = (1..l)
                    .map(|m| m as u64 + t[m][s] + t[l - m][s - 1])
                    .min()
                    .unwrap();
            }
        }
        t
    }

    #[test]
    fn closed_form_is_the_optimum() {
        let t = brute_force(150, 8);
        for (l, row) in t.iter().enumerate().skip(1) {
            for (s, &best) in row.iter().enumerate().skip(1) {
                assert_eq!(optimal_advances(l as u64, s as u64), best, "l={l} s={s}");
            }
        }
    }

    #[test]
    fn split_reaches_the_optimum() {
        let t = brute_force(150, 8);
        for l in 2..=150usize {
            for s in 1..=8usize {
                let m = split(l as u64, s as u64) as usize;
                assert!((1..l).contains(&m), "l={l} s={s} m={m}");
                let cost = if s == 1 {
                    m as u64 + t[l - m][1] + t[m][1]
                } else {
                    m as u64 + t[m][s] + t[l - m][s - 1]
                };
                assert_eq!(cost, t[l][s], "l={l} s={s} m={m}");
                assert_eq!(simulated_advances(l as u64, s as u64), t[l][s]);
            }
        }
    }

    #[test]
    fn published_values() {
        // Griewank & Walther, Table 12.1 style values: β(s, r).
        assert_eq!(beta(3, 2), 10);
        assert_eq!(beta(30, 5), 324_632);
        // One snapshot: l(l-1)/2; as many snapshots as steps: l-1.
        assert_eq!(optimal_advances(10, 1), 45);
        assert_eq!(optimal_advances(10, 10), 9);
        // 10^5 steps with 30 snapshots: r = 5, t = 5·10^5 − C(35, 4).
        assert_eq!(repetitions(100_000, 30), 5);
        assert_eq!(optimal_advances(100_000, 30), 500_000 - 52_360);
    }
}
