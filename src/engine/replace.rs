//! The replace generation: a monotonic count of real, persisted replacements of what
//! the model sees. It never decreases, has no reset and no API to lower it; it advances in exactly one
//! place (`Engine::commit_replacement`, after the new history or session is persisted).

/// A monotonic counter. Only `advance` changes it.
#[derive(Debug, Default)]
pub(crate) struct ReplaceGeneration(u64);

impl ReplaceGeneration {
    /// Continue a recorded count (`--continue`): the counter never restarts below what was persisted.
    pub fn starting_at(n: u64) -> Self {
        ReplaceGeneration(n)
    }

    pub fn get(&self) -> u64 {
        self.0
    }

    /// Called once per persisted replacement, from one place only.
    pub(crate) fn advance(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }
}

/// The overflow-retry rule: retry only when the generation strictly advanced since the snapshot, and
/// at most `cap` times in a row (the count resets on every successful model response).
pub(crate) fn may_retry_overflow(snapshot: u64, now: u64, retries_in_a_row: u32, cap: u32) -> bool {
    now > snapshot && retries_in_a_row < cap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_rule() {
        assert!(may_retry_overflow(3, 4, 0, 1));
        assert!(!may_retry_overflow(3, 3, 0, 1), "no advance, no retry");
        assert!(!may_retry_overflow(3, 4, 1, 1), "cap of one in a row");
        let mut g = ReplaceGeneration::default();
        let before = g.get();
        g.advance();
        assert!(g.get() > before);
    }
}
