//! A minimal SSE record scanner for the client side: it only needs to know
//! where each `data:` record ends and whether it was a terminal one, so it
//! does not build strings per event (the client must not be the
//! bottleneck). Accepts LF and CRLF framing (AG-UI and A2A).

/// What one completed SSE record was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Record {
    /// A data record that does not end the run.
    Event,
    /// `RUN_FINISHED` (AG-UI).
    Finished,
    /// `RUN_ERROR` (AG-UI), or a JSON-RPC error / failed task (A2A).
    Error,
}

/// Push scanner: feed chunks, get records through the callback.
#[derive(Debug, Default)]
pub(crate) struct Scanner {
    line: Vec<u8>,
    pending: Option<Record>,
    tick: Option<Tick>,
}

impl Scanner {
    /// Feeds one chunk; `on_record` runs once per completed data record,
    /// with the send time (Unix µs) of a `ticks` scenario delta it carries.
    /// Comments (`: heartbeat`) and records without data are skipped.
    pub(crate) fn feed(
        &mut self,
        mut chunk: &[u8],
        mut on_record: impl FnMut(Record, Option<Tick>),
    ) {
        while let Some(at) = chunk.iter().position(|b| *b == b'\n') {
            let line_end = &chunk[..at];
            if self.line.is_empty() {
                self.finish_line(line_end, &mut on_record);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(line_end);
                self.finish_line(&line, &mut on_record);
                line.clear();
                self.line = line;
            }
            chunk = &chunk[at + 1..];
        }
        self.line.extend_from_slice(chunk);
    }

    fn finish_line(&mut self, line: &[u8], on_record: &mut impl FnMut(Record, Option<Tick>)) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            if let Some(record) = self.pending.take() {
                on_record(record, self.tick.take());
            }
            return;
        }
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        self.tick = self.tick.or_else(|| tick_stamp(data));
        let kind = classify(data);
        self.pending = Some(match self.pending {
            Some(Record::Event) | None => kind,
            Some(earlier) => earlier,
        });
    }
}

fn classify(data: &[u8]) -> Record {
    if contains(data, b"\"type\":\"RUN_FINISHED\"") {
        Record::Finished
    } else if contains(data, b"\"type\":\"RUN_ERROR\"")
        || contains(data, b"{\"error\":")
        || contains(data, b"\"TASK_STATE_FAILED\"")
    {
        Record::Error
    } else {
        Record::Event
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    find(haystack, needle).is_some()
}

/// A vectorised substring search. The runtime's frames are kilobytes long:
/// with a naive search, scanning took 6 % of the load process's CPU in
/// A2A-direct runs; with this one, 1.5 %.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// A `ticks` scenario delta: its index in the run and its send time (Unix
/// µs).
pub(crate) type Tick = (u64, u64);

/// The tick in `tick-<i>@<unix µs>` (the scripted runtime's `ticks`
/// scenario), wherever it appears in the record.
fn tick_stamp(data: &[u8]) -> Option<Tick> {
    let rest = &data[find(data, b"tick-")? + 5..];
    let index_end = rest.iter().position(|b| !b.is_ascii_digit())?;
    let index = std::str::from_utf8(&rest[..index_end]).ok()?.parse().ok()?;
    let rest = &rest[index_end..];
    let digits = rest.strip_prefix(b"@")?;
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let sent = std::str::from_utf8(&digits[..end]).ok()?.parse().ok()?;
    Some((index, sent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(chunks: &[&str]) -> Vec<Record> {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        for chunk in chunks {
            scanner.feed(chunk.as_bytes(), |r, _| out.push(r));
        }
        out
    }

    #[test]
    fn agui_records_across_chunk_boundaries() {
        let stream = "data: {\"type\":\"RUN_STARTED\"}\n\n: heartbeat\n\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\"}\n\ndata: {\"type\":\"RUN_FINISHED\"}\n\n";
        let whole = scan(&[stream]);
        assert_eq!(whole, [Record::Event, Record::Event, Record::Finished]);
        for split in 1..stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(scan(&[a, b]), whole, "split at {split}");
        }
    }

    #[test]
    fn crlf_framing_and_errors() {
        let a2a = "data: {\"result\":{}}\r\n\r\n: ping\r\n\r\ndata: {\"error\":{\"code\":-32602}}\r\n\r\n";
        assert_eq!(scan(&[a2a]), [Record::Event, Record::Error]);
        assert_eq!(
            scan(&["data: {\"type\":\"RUN_ERROR\"}\n\n"]),
            [Record::Error]
        );
    }

    #[test]
    fn tick_send_times_are_read_from_the_delta() {
        let mut scanner = Scanner::default();
        let mut ticks = Vec::new();
        let stream =
            "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"tick-7@1733150000123456 \"}\n\n\
                      data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"delta-7 \"}\n\n\
                      data: {\"result\":{\"text\":\"tick-x@12\"}}\r\n\r\n";
        for split in [1, 40, 100] {
            let (a, b) = stream.split_at(split);
            ticks.clear();
            for chunk in [a, b] {
                scanner.feed(chunk.as_bytes(), |_, tick| ticks.push(tick));
            }
            assert_eq!(
                ticks,
                [Some((7, 1_733_150_000_123_456)), None, None],
                "split at {split}"
            );
        }
    }

    #[test]
    fn an_unterminated_record_is_not_counted() {
        assert_eq!(scan(&["data: {\"type\":\"RUN_FINISHED\"}\n"]), []);
    }
}
