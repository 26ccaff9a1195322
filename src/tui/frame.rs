//! The frame requester: frames are drawn only when something asks for one. Requests coalesce into
//! one deadline, the earliest asked for, and frames are at least 1/60 s apart. With no request
//! there is no deadline, so an idle app draws nothing and wakes for nothing.
//!
//! It lives inside the app's `select!` loop (time is passed in, so it is a pure state machine);
//! the reducer asks for frames through `Effect::ScheduleFrame`.

use std::time::{Duration, Instant};

/// The shortest interval between two frames: 60 fps.
pub(crate) const MIN_FRAME_INTERVAL: Duration = Duration::from_micros(16_667);

/// The shortest interval before a frame that answers the user's own input: a keystroke is drawn at
/// once rather than waiting for the next 60 fps slot of a busy stream (input comes at human speed,
/// so this does not raise the sustained frame rate).
pub(crate) const MIN_INPUT_FRAME_INTERVAL: Duration = Duration::from_millis(4);

/// Coalesces frame requests into a single deadline.
#[derive(Debug, Default)]
pub(crate) struct FrameRequester {
    deadline: Option<Instant>,
    last_frame: Option<Instant>,
}

impl FrameRequester {
    /// No frame pending, none drawn yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Ask for a frame as soon as the frame-rate cap allows.
    pub(crate) fn schedule_frame(&mut self, now: Instant) {
        self.schedule_frame_in(now, Duration::ZERO);
    }

    /// Ask for a frame after `delay` (an animation's next step). An earlier pending request wins.
    pub(crate) fn schedule_frame_in(&mut self, now: Instant, delay: Duration) {
        let mut at = now + delay;
        if let Some(last) = self.last_frame {
            at = at.max(last + MIN_FRAME_INTERVAL);
        }
        self.deadline = Some(match self.deadline {
            Some(current) => current.min(at),
            None => at,
        });
    }

    /// Bring a pending frame forward because it answers user input: due at once, or
    /// [`MIN_INPUT_FRAME_INTERVAL`] after the last frame. Does nothing when no frame is pending.
    pub(crate) fn expedite_for_input(&mut self, now: Instant) {
        let Some(current) = self.deadline else { return };
        let mut at = now;
        if let Some(last) = self.last_frame {
            at = at.max(last + MIN_INPUT_FRAME_INTERVAL);
        }
        self.deadline = Some(current.min(at));
    }

    /// When the next frame is due, if one is pending.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// True when a frame is pending and its time has come.
    #[cfg(test)]
    pub(crate) fn is_due(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| d <= now)
    }

    /// A frame was drawn at `now`: the pending request is satisfied.
    pub(crate) fn frame_drawn(&mut self, now: Instant) {
        self.last_frame = Some(now);
        self.deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_frames_skip_the_60fps_slot_but_not_the_floor() {
        let t0 = Instant::now();
        let mut f = FrameRequester::new();
        f.expedite_for_input(t0);
        assert_eq!(f.deadline(), None, "nothing pending, nothing to expedite");
        f.frame_drawn(t0);
        f.schedule_frame(t0 + Duration::from_millis(1));
        assert_eq!(f.deadline(), Some(t0 + MIN_FRAME_INTERVAL));
        f.expedite_for_input(t0 + Duration::from_millis(1));
        assert_eq!(f.deadline(), Some(t0 + MIN_INPUT_FRAME_INTERVAL));
        f.expedite_for_input(t0 + Duration::from_millis(10));
        assert_eq!(
            f.deadline(),
            Some(t0 + MIN_INPUT_FRAME_INTERVAL),
            "an earlier deadline wins"
        );
    }

    #[test]
    fn idle_has_no_deadline() {
        let f = FrameRequester::new();
        assert_eq!(f.deadline(), None);
        assert!(!f.is_due(Instant::now()));
    }

    #[test]
    fn requests_coalesce_to_the_earliest() {
        let t0 = Instant::now();
        let mut f = FrameRequester::new();
        f.schedule_frame_in(t0, Duration::from_secs(1));
        f.schedule_frame_in(t0, Duration::from_millis(100));
        f.schedule_frame_in(t0, Duration::from_millis(500));
        assert_eq!(f.deadline(), Some(t0 + Duration::from_millis(100)));
        f.schedule_frame(t0);
        assert_eq!(f.deadline(), Some(t0));
        assert!(f.is_due(t0));
        f.frame_drawn(t0);
        assert_eq!(
            f.deadline(),
            None,
            "one frame satisfies every coalesced request"
        );
    }

    #[test]
    fn frames_are_capped_at_60_fps() {
        let t0 = Instant::now();
        let mut f = FrameRequester::new();
        f.schedule_frame(t0);
        f.frame_drawn(t0);
        // A burst of requests right after a frame waits for the cap.
        for i in 0..100 {
            f.schedule_frame(t0 + Duration::from_micros(i * 10));
        }
        assert_eq!(f.deadline(), Some(t0 + MIN_FRAME_INTERVAL));
        assert!(!f.is_due(t0 + Duration::from_millis(10)));
        assert!(f.is_due(t0 + MIN_FRAME_INTERVAL));
        // A request long after the last frame is served at once.
        let later = t0 + Duration::from_secs(5);
        f.frame_drawn(t0 + MIN_FRAME_INTERVAL);
        f.schedule_frame(later);
        assert_eq!(f.deadline(), Some(later));
    }
}
