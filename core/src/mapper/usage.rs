//! Token usage summed per (provider, model) (SPEC §6 "Usage").

use serde_json::{Map, Value};

use crate::agui::TokenUsage;
use crate::json::lenient_u64;

/// 2^53 − 1, the largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Running totals in first-seen order of (provider, model).
#[derive(Debug, Clone, Default)]
pub(super) struct UsageTotals {
    groups: Vec<TokenUsage>,
}

impl UsageTotals {
    /// Adds one usage record (`metadata.iac_code.usage` or Pipeline `usage`
    /// data). Counts that are missing, negative or fractional count as 0.
    pub(super) fn record(&mut self, usage: &Map<String, Value>) {
        let label = |key: &str| {
            usage
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let count = |key: &str| usage.get(key).and_then(lenient_u64).unwrap_or(0);
        // JavaScript clients read counts as doubles: stay integral there.
        let add = |a: u64, b: u64| a.saturating_add(b).min(MAX_SAFE_INTEGER);
        let provider = label("provider");
        let model = label("model");
        let index = match self
            .groups
            .iter()
            .position(|g| g.provider == provider && g.model == model)
        {
            Some(index) => index,
            None => {
                self.groups.push(TokenUsage {
                    provider,
                    model,
                    input_tokens: 0,
                    output_tokens: 0,
                    total_tokens: 0,
                    cached_input_tokens: 0,
                });
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[index];
        group.input_tokens = add(group.input_tokens, count("inputTokens"));
        group.output_tokens = add(group.output_tokens, count("outputTokens"));
        group.total_tokens = add(group.total_tokens, count("totalTokens"));
        group.cached_input_tokens = add(group.cached_input_tokens, count("cachedInputTokens"));
    }

    /// The totals, or `None` when nothing was recorded.
    pub(super) fn aggregate(&self) -> Option<Vec<TokenUsage>> {
        (!self.groups.is_empty()).then(|| self.groups.clone())
    }
}
