//! Approximate list prices, for the ledger's `cost_usd` (USD per million tokens).

use super::types::Usage;

struct Price {
    input: f64,
    output: f64,
    cache_write: f64,
    cache_read: f64,
}

fn price_for(model: &str) -> Option<Price> {
    let m = model.to_ascii_lowercase();
    let p = |input: f64, output: f64| Price {
        input,
        output,
        cache_write: input * 1.25,
        cache_read: input * 0.1,
    };
    if m.contains("opus") {
        Some(p(15.0, 75.0))
    } else if m.contains("sonnet") {
        Some(p(3.0, 15.0))
    } else if m.contains("haiku") {
        Some(p(1.0, 5.0))
    } else if m.contains("gpt-4o-mini") || m.contains("gpt-4.1-mini") {
        Some(p(0.4, 1.6))
    } else if m.contains("gpt-4.1") {
        Some(p(2.0, 8.0))
    } else if m.contains("gpt-4o") {
        Some(p(2.5, 10.0))
    } else {
        None
    }
}

/// The cost of one response; 0 for models without a known price (local servers, the demo).
pub fn cost_usd(model: &str, u: &Usage) -> f64 {
    let Some(p) = price_for(model) else {
        return 0.0;
    };
    (u.input_tokens as f64 * p.input
        + u.output_tokens as f64 * p.output
        + u.cache_creation_input_tokens as f64 * p.cache_write
        + u.cache_read_input_tokens as f64 * p.cache_read)
        / 1_000_000.0
}

/// What the provider's web search costs a search (USD; $10 per 1,000 searches).
pub const WEB_SEARCH_USD: f64 = 0.01;

/// The `/cost` line of a step's web searches.
pub fn web_search_line(searches: u64) -> String {
    format!(
        "web search: {searches} search{} · ${:.2} (in the costs above; $10 per 1,000)",
        if searches == 1 { "" } else { "es" },
        web_search_usd(searches)
    )
}

/// The cost of `searches` web searches.
pub fn web_search_usd(searches: u64) -> f64 {
    searches as f64 * WEB_SEARCH_USD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices() {
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            ..Default::default()
        };
        assert!((cost_usd("claude-sonnet-4-5", &u) - 18.0).abs() < 1e-9);
        assert_eq!(cost_usd("llama-3", &u), 0.0);
        assert!((web_search_usd(1_000) - 10.0).abs() < 1e-9);
    }
}
