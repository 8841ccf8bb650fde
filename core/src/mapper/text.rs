//! Assistant text and reasoning (SPEC §6 rows "agent text" and reasoning),
//! with the resume replay rule: a resumed agent may resend everything it said
//! before the interrupt plus a new suffix; only the suffix is shown.
//!
//! Only digests of finalised texts are kept across runs (the thread document
//! is not a conversation store), so the replayed prefix is found by hashing
//! every prefix of the first status text of a message id and keeping the
//! longest one whose digest is known.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use super::Mapper;
use crate::agui::EventBody;
use crate::ids::IdGen;

/// Text bookkeeping of one run.
#[derive(Debug, Clone, Default)]
pub(super) struct TextState {
    /// Message id → digest, so far, of the text produced since it was last
    /// finalised (a running hash: memory does not grow with the text).
    parts: BTreeMap<String, RunningDigest>,
    /// Message ids whose first status text was checked for a replay.
    replay_checked: BTreeSet<String>,
    /// True once any text was mapped in this run (an `assistantFinal` then
    /// repeats it, and the history fallback is no longer needed).
    pub(super) emitted: bool,
}

impl TextState {
    /// Digests of every unfinalised text, clearing them.
    pub(super) fn take_all(&mut self) -> Vec<String> {
        std::mem::take(&mut self.parts)
            .into_values()
            .filter_map(RunningDigest::finish)
            .collect()
    }

    /// Digest of the unfinalised text of `id`, clearing it.
    fn take(&mut self, id: &str) -> Option<String> {
        self.parts.remove(id)?.finish()
    }
}

/// SHA-256 of a text fed piece by piece.
#[derive(Debug, Clone)]
struct RunningDigest {
    hasher: Sha256,
    empty: bool,
}

impl Default for RunningDigest {
    fn default() -> Self {
        RunningDigest {
            hasher: Sha256::new(),
            empty: true,
        }
    }
}

impl RunningDigest {
    fn of(text: &str) -> Self {
        let mut digest = RunningDigest::default();
        digest.push(text);
        digest
    }

    fn push(&mut self, text: &str) {
        self.hasher.update(text.as_bytes());
        self.empty &= text.is_empty();
    }

    /// The SHA-256 hex of the whole text; `None` for an empty text.
    fn finish(self) -> Option<String> {
        (!self.empty).then(|| crate::json::hex(&self.hasher.finalize()))
    }
}

impl Mapper {
    /// Status-message text: checks the resume replay rule once per message
    /// id, then maps the (remaining) text.
    pub(super) fn map_status_text(
        &mut self,
        text: &str,
        message_id: Option<&str>,
        out: &mut Vec<EventBody>,
        ids: &mut IdGen,
    ) {
        let key = message_id.or(self.spans.current_text.as_deref());
        let Some(key) = key else {
            self.map_text(text, None, false, true, out, ids);
            return;
        };
        if self.text.replay_checked.contains(key) {
            self.map_text(text, message_id, false, true, out, ids);
            return;
        }
        let key = key.to_owned();
        self.text.replay_checked.insert(key.clone());
        let prefix = replayed_prefix_len(text, &self.durable.text_snapshot_digests);
        if prefix == 0 {
            self.map_text(text, message_id, false, true, out, ids);
            return;
        }
        // Keep the whole text as the message's next snapshot, show the suffix.
        self.text.parts.insert(key, RunningDigest::of(text));
        let suffix = &text[prefix..];
        if !suffix.is_empty() {
            self.map_text(suffix, message_id, false, false, out, ids);
        }
    }

    /// Maps one text delta into message `message_id` (else the current
    /// message, else a fresh `assistant-<hex>`). Reasoning closes first; a
    /// new message closes the current one unless `parallel` (Pipeline text).
    pub(super) fn map_text(
        &mut self,
        text: &str,
        message_id: Option<&str>,
        parallel: bool,
        record: bool,
        out: &mut Vec<EventBody>,
        ids: &mut IdGen,
    ) {
        if text.is_empty() {
            return;
        }
        self.spans.close_reasoning(out);
        // Borrowed in the common case (a delta of a named message): a delta
        // copies only what its event needs.
        let id: Cow<'_, str> = match message_id {
            Some(id) => Cow::Borrowed(id),
            None => Cow::Owned(match &self.spans.current_text {
                Some(id) => id.clone(),
                None => format!("assistant-{}", ids.uuid_hex()),
            }),
        };
        if !self.spans.text_open(&id) {
            if !parallel {
                if let Some(current) = self.spans.current_text.clone() {
                    self.close_text(&current, out);
                }
            }
            self.spans.open_text(&id, out);
        }
        if self.spans.current_text.as_deref() != Some(&*id) {
            self.spans.current_text = Some(id.to_string());
        }
        self.spans.text_content(&id, text, out);
        if record {
            match self.text.parts.get_mut(&*id) {
                Some(digest) => digest.push(text),
                None => {
                    self.text
                        .parts
                        .insert(id.into_owned(), RunningDigest::of(text));
                }
            }
        }
        self.text.emitted = true;
    }

    /// Raw thinking into reasoning span `reasoning-<message id | current text
    /// message | run id>`.
    pub(super) fn map_thinking(
        &mut self,
        value: &serde_json::Value,
        message_id: Option<&str>,
        out: &mut Vec<EventBody>,
    ) {
        if value.get("type").and_then(|t| t.as_str()) != Some("raw_thinking") {
            return;
        }
        let Some(text) = value.get("text").and_then(|t| t.as_str()) else {
            return;
        };
        if text.is_empty() {
            return;
        }
        let owner = message_id
            .map(str::to_owned)
            .or_else(|| self.spans.current_text.clone())
            .unwrap_or_else(|| self.ctx.run_id.clone());
        self.spans
            .reasoning(&format!("reasoning-{owner}"), text, out);
    }

    /// Closes text message `id`, finalising its snapshot.
    pub(super) fn close_text(&mut self, id: &str, out: &mut Vec<EventBody>) {
        if self.spans.close_text(id, out) {
            self.finalize_text(id);
        }
    }

    /// Closes every open text message, sorted by id.
    pub(super) fn close_texts(&mut self, out: &mut Vec<EventBody>) {
        for id in self.spans.open_texts() {
            self.close_text(&id, out);
        }
    }

    /// Keeps the digest of the text of `id` produced so far.
    pub(super) fn finalize_text(&mut self, id: &str) {
        if let Some(digest) = self.text.take(id) {
            self.durable.text_snapshot_digests.insert(digest);
        }
    }
}

/// Byte length of the longest prefix of `text` (on a character boundary)
/// whose digest is in `digests`; 0 when none is.
fn replayed_prefix_len(text: &str, digests: &BTreeSet<String>) -> usize {
    if digests.is_empty() {
        return 0;
    }
    let mut hasher = Sha256::new();
    let mut longest = 0;
    let mut buf = [0u8; 4];
    for (start, ch) in text.char_indices() {
        hasher.update(ch.encode_utf8(&mut buf).as_bytes());
        let end = start + ch.len_utf8();
        let digest = crate::json::hex(&hasher.clone().finalize());
        if digests.contains(&digest) {
            longest = end;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SHA-256 hex of a text's UTF-8 bytes.
    fn text_digest(text: &str) -> String {
        crate::json::hex(&Sha256::digest(text.as_bytes()))
    }

    #[test]
    fn running_digest_equals_the_digest_of_the_whole_text() {
        let mut running = RunningDigest::default();
        for piece in ["", "Hé", "", "llo ", "wörld"] {
            running.push(piece);
        }
        assert_eq!(running.finish(), Some(text_digest("Héllo wörld")));
        assert_eq!(RunningDigest::of("abc").finish(), Some(text_digest("abc")));
        let mut empty = RunningDigest::default();
        empty.push("");
        assert_eq!(empty.finish(), None, "an empty text has no digest");
    }

    #[test]
    fn replayed_prefix_finds_the_longest_known_prefix() {
        let mut digests = BTreeSet::new();
        digests.insert(text_digest("Hé"));
        digests.insert(text_digest("Hé, wor"));
        assert_eq!(replayed_prefix_len("Hé, world!", &digests), "Hé, wor".len());
        assert_eq!(replayed_prefix_len("Bye", &digests), 0);
        assert_eq!(replayed_prefix_len("", &digests), 0);
    }
}
