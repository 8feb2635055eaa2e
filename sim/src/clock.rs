//! The page's clock (`Date.now()`), one for every tab of the browser: the simulated time
//! from [`EPOCH_MS`], in some runs stepped back once (an NTP correction, a laptop waking, a
//! customer fixing the time) or rounded to 100 ms (Firefox's and Tor's fingerprinting
//! resistance). Timers are not moved by it: they count elapsed time.

/// Where the simulated clock starts, ms since the epoch (the machine stores timestamps).
pub const EPOCH_MS: f64 = 1.8e12;

/// How the page's clock departs from the simulated time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Clock {
    /// From this simulated ms on, the clock reads this many ms less.
    pub step: Option<(f64, f64)>,
    /// The clock is rounded down to a multiple of this many ms.
    pub round_ms: Option<f64>,
}

impl Clock {
    /// What `Date.now()` reads at simulated time `now`.
    pub fn read(&self, now: f64) -> f64 {
        let mut t = EPOCH_MS + now;
        if let Some((at, back)) = self.step {
            if now >= at {
                t -= back;
            }
        }
        if let Some(r) = self.round_ms {
            t = (t / r).floor() * r;
        }
        t
    }
}
