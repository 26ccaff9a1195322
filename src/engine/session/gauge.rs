//! What the gauge shows: a main-thread response's reading of the context, its cost (booked for
//! the session, the step and its generation, as every request's is), and between responses an
//! estimate — the last reading plus what was appended since, and before the session's first
//! response its floor (the system prompt and the tool specs).

use super::Engine;

use crate::engine::protocol::Event;
use crate::engine::types::ModelResponse;

impl Engine {
    /// Book a request's cost: the step, its generation and the session.
    pub(in crate::engine::session) fn add_cost(&mut self, cost: f64) {
        self.conversation.cost_usd += cost;
        self.ledger.record(|rec| {
            rec.figures.cost_usd += cost;
            rec.current_generation().cost_usd += cost;
        });
    }

    /// Account a successful response: ctx, cost, ledger; reset the overflow counter.
    pub(in crate::engine::session) fn on_response(&mut self, resp: &ModelResponse) {
        self.counters.responded();
        let ctx = resp.usage.context();
        self.conversation.ctx = ctx;
        self.conversation.appended_chars = 0;
        let searches = resp.web_search_requests;
        let cost = crate::engine::pricing::cost_usd(&self.settings.model, &resp.usage)
            + crate::engine::pricing::web_search_usd(searches);
        self.add_cost(cost);
        let window = self.settings.thresholds.window;
        self.ledger.record(|rec| {
            rec.figures.web_searches += searches;
            rec.figures.context = ctx;
            rec.figures.window = window;
            rec.current_generation().context = ctx;
        });
        self.ledger.save();
        self.emit_logged(Event::Usage {
            turn: self.turn_id(),
            context: ctx,
            thresholds: self.settings.thresholds,
            estimated: false,
            usage: resp.usage,
            cost_usd: cost,
            session_cost_usd: self.conversation.cost_usd,
            masked_tokens: self.conversation.mask.saved_tokens(),
        });
    }

    /// The gauge between responses: the context as estimated now.
    pub(in crate::engine::session) fn emit_usage_estimate(&self) {
        self.emit(Event::Usage {
            turn: self.turn_id(),
            context: self.ctx_estimate(),
            thresholds: self.settings.thresholds,
            estimated: true,
            usage: Default::default(),
            cost_usd: 0.0,
            session_cost_usd: self.conversation.cost_usd,
            masked_tokens: self.conversation.mask.saved_tokens(),
        });
    }

    /// The context the gauge shows: the last report plus an estimate of what was appended since
    /// (and of the session's floor, before its first report).
    pub(in crate::engine::session) fn ctx_estimate(&self) -> u64 {
        // Before the session's first response nothing has counted its prompt and tools yet.
        let floor = if self.conversation.ctx == 0 {
            self.counters.estimate(self.floor_chars())
        } else {
            0
        };
        self.conversation.ctx + floor + self.counters.estimate(self.conversation.appended_chars)
    }
}
