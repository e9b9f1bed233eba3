//! The Mahimahi trace and delay/loss CSV readers: the one parser of each format (the Python
//! side only checks the path and passes it), and the one place satcc-core reads a file. A trace can be large (a
//! 15-minute recording at 100 Mbit/s is 10^7 lines, 79 MB), so it is streamed from the file
//! into a `Vec<u64>` (8 B a line; growth through `try_reserve` inside [`crate::mem::fallible`],
//! so running out of memory is an error, never an abort) and kept, per process, in a small
//! cache: `satcc check`, the resolver and the simulator's reader of the same file in one
//! process parse it once.
//!
//! Before a file is parsed its lines are counted (a pass that keeps nothing, ~0.1 s for 256
//! MiB): what it will hold is known up front, checked against the caller's memory budget
//! ([`TraceError::TooLarge`], before a byte is kept: 256 MiB of 2-byte lines would be 1.07 GB)
//! and reserved once, so a trace costs its 8 B a line and no more while it is read.
//!
//! A delay/loss CSV (`t_ms,delay_ms[,loss]`, [`read_delay_csv`]) is read the same way, 24 B a
//! row, with its time-weighted means ([`series_time_mean`]) for the nominal delay and loss.
//!
//! Rules, as `mm-link(1)` reads a trace (ravinet/mahimahi `link_queue.cc`): one unsigned
//! integer per line (spaces around it allowed), no empty line, non-decreasing, at least one
//! line, the last one > 0. Errors name the line and what was expected, never quote the file.

use std::io::{BufRead, BufReader, Read, Seek};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::trace::Row;
use crate::mem;
use crate::time::{SimDuration, SimTime};

/// A trace time: one year in ms (python `linkmodels.MAX_TRACE_MS`).
pub const MAX_TRACE_MS: u64 = 366 * 86_400_000;
/// A trace file: 256 MiB (python `limits.MAX_TRACE_BYTES`).
pub const MAX_TRACE_BYTES: u64 = 256 << 20;
/// Parsed traces a process keeps (by path, size, modification time and inode).
const CACHE_ENTRIES: usize = 4;

/// Why a trace could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceError {
    /// The file is not a valid trace (a message without the path: the caller names it).
    Input(String),
    /// The trace does not fit in memory.
    OutOfMemory(String),
    /// The trace would need more memory than the caller's budget (known before parsing).
    TooLarge(String),
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Input(m) | TraceError::OutOfMemory(m) | TraceError::TooLarge(m) => {
                f.write_str(m)
            }
        }
    }
}

/// A parsed trace: the timestamps and a digest of them (FNV-1a 64 over the values, so a
/// result records which trace it replayed without carrying it).
#[derive(Debug, Clone, PartialEq)]
pub struct Stamps {
    pub ms: Arc<Vec<u64>>,
    pub digest: String,
}

fn input(m: impl Into<String>) -> TraceError {
    TraceError::Input(m.into())
}

/// Parse a trace from a byte stream with mm-link's rules.
pub fn read_mahimahi(r: impl Read) -> Result<Vec<u64>, TraceError> {
    read_mahimahi_into(r, Vec::new())
}

/// [`read_mahimahi`] into `out` (empty, perhaps already reserved).
fn read_mahimahi_into(r: impl Read, mut out: Vec<u64>) -> Result<Vec<u64>, TraceError> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    let mut line = 0u64;
    let mut buf: Vec<u8> = Vec::with_capacity(64);
    loop {
        buf.clear();
        // a line longer than any timestamp is read no further than needed to refuse it
        let n = (&mut r)
            .take(64)
            .read_until(b'\n', &mut buf)
            .map_err(|e| input(format!("cannot read it ({e})")))?;
        if n == 0 {
            break;
        }
        line += 1;
        let complete = buf.last() == Some(&b'\n');
        if !complete && n == 64 {
            return Err(input(format!(
                "line {line}: expected a millisecond timestamp (digits), found other text"
            )));
        }
        let s = buf.trim_ascii();
        if s.is_empty() {
            return Err(input(format!("line {line}: invalid empty line")));
        }
        if !s.iter().all(u8::is_ascii_digit) {
            return Err(input(format!(
                "line {line}: expected a millisecond timestamp (digits), found other text"
            )));
        }
        let v = if s.len() <= 15 {
            s.iter().fold(0u64, |a, &c| a * 10 + u64::from(c - b'0'))
        } else {
            u64::MAX
        };
        if v > MAX_TRACE_MS {
            return Err(input(format!(
                "line {line}: expected a timestamp of at most {MAX_TRACE_MS} ms, found a larger one"
            )));
        }
        if out.last().is_some_and(|&last| v < last) {
            return Err(input(format!(
                "line {line}: timestamps must be non-decreasing"
            )));
        }
        if out.len() == out.capacity() {
            let more = out.capacity().max(1 << 12);
            mem::fallible(|| out.try_reserve_exact(more)).map_err(|_| {
                TraceError::OutOfMemory(format!(
                    "out of memory reading a Mahimahi trace: {line} lines need {:.2} GB at 8 B a line, \
                     more than this process may allocate",
                    (2 * out.capacity() * 8) as f64 / 1e9
                ))
            })?;
        }
        out.push(v);
    }
    check(&out)?;
    Ok(out)
}

/// mm-link's rules on a whole trace (at least one line, the last > 0).
pub fn check(stamps: &[u64]) -> Result<(), TraceError> {
    match stamps.last() {
        None => Err(input("a trace needs at least one timestamp")),
        Some(0) => Err(input(
            "the trace must last for a nonzero amount of time (last timestamp > 0)",
        )),
        Some(_) if stamps.windows(2).any(|w| w[0] > w[1]) => {
            Err(input("timestamps must be non-decreasing"))
        }
        Some(_) => Ok(()),
    }
}

/// FNV-1a 64 over the timestamps' little-endian bytes, as 16 hex digits.
pub fn digest(stamps: &[u64]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in stamps {
        for b in v.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("fnv1a64:{h:016x}")
}

type Key = (PathBuf, u64, u64, u64, i64, i64);
static CACHE: Mutex<Vec<(Key, Stamps)>> = Mutex::new(Vec::new());

/// The lines of `file` within the size cap (a last line without a newline counts), read
/// through a fixed buffer that keeps nothing; the file is left at its start. An upper bound of
/// the entries a parse keeps (empty, comment and header lines are counted too).
fn count_lines(file: &mut std::fs::File) -> Result<u64, TraceError> {
    let mut buf = [0u8; 1 << 16];
    let (mut lines, mut last) = (0u64, b'\n');
    let mut r = (&mut *file).take(MAX_TRACE_BYTES);
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(input(format!("cannot read it ({e})"))),
        };
        lines += buf[..n].iter().filter(|&&c| c == b'\n').count() as u64;
        last = buf[n - 1];
    }
    if last != b'\n' {
        lines += 1;
    }
    file.rewind()
        .map_err(|e| input(format!("cannot read it ({e})")))?;
    Ok(lines)
}

/// An empty vector with room for `lines` entries of `what`, once they are known to fit in
/// `budget_bytes` (what the caller may still allocate; `None`: no budget).
fn reserve_within<T>(
    lines: u64,
    budget_bytes: Option<u64>,
    what: &str,
    unit: &str,
) -> Result<Vec<T>, TraceError> {
    let each = std::mem::size_of::<T>() as u64;
    let need = lines.saturating_mul(each);
    if let Some(budget) = budget_bytes.filter(|&b| need > b) {
        return Err(TraceError::TooLarge(format!(
            "expected {what} that fits in memory, found {lines} {unit}s needing {:.2} GB at \
             {each} B a {unit}, more than the {:.2} GB this process may still use",
            need as f64 / 1e9,
            budget as f64 / 1e9
        )));
    }
    let mut out = Vec::new();
    mem::fallible(|| out.try_reserve_exact(lines as usize)).map_err(|_| {
        TraceError::OutOfMemory(format!(
            "out of memory reading {what}: {lines} {unit}s need {:.2} GB at {each} B a {unit}, \
             more than this process may allocate",
            need as f64 / 1e9
        ))
    })?;
    Ok(out)
}

/// `path` opened without blocking, once it is known to be a regular file within the cap, and
/// its cache key.
fn open_checked(path: &Path) -> Result<(std::fs::File, Key), TraceError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => input("found no such file"),
            std::io::ErrorKind::PermissionDenied => input("found a file satcc may not read"),
            _ => input(format!("found an unreadable path ({e})")),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| input(format!("found an unreadable file ({e})")))?;
    if !meta.is_file() {
        return Err(input("expected a regular file, found something else"));
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(input(format!(
            "expected a file of at most 256.0 MiB, found {:.1} MiB",
            meta.len() as f64 / (1 << 20) as f64
        )));
    }
    let key: Key = (
        path.to_path_buf(),
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
    );
    Ok((file, key))
}

/// The trace at `path`, parsed once per process while the file is unchanged: a regular file of
/// at most 256 MiB (opened without blocking, so a FIFO put in its place is refused, not waited
/// on) whose lines, counted first, fit in `budget_bytes` at 8 B a line ([`TraceError::TooLarge`]
/// before any is parsed).
pub fn load(path: &Path, budget_bytes: Option<u64>) -> Result<Stamps, TraceError> {
    let (mut file, key) = open_checked(path)?;
    let cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, s)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(s.clone());
    }
    drop(cache);
    let lines = count_lines(&mut file)?;
    let out = reserve_within(lines, budget_bytes, "a Mahimahi trace", "line")?;
    // never past the cap, even if the file grows while it is read
    let ms = read_mahimahi_into(file.take(MAX_TRACE_BYTES), out)?;
    let stamps = Stamps {
        digest: digest(&ms),
        ms: Arc::new(ms),
    };
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= CACHE_ENTRIES {
        cache.remove(0);
    }
    cache.push((key, stamps.clone()));
    Ok(stamps)
}

/// A delay/loss series read from a CSV (`t_ms,delay_ms[,loss]`), as the trace model's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub rows: Arc<Vec<Row>>,
    pub digest: String,
}

/// Parse rows `t_ms,delay_ms[,loss]` (the python `linkmodels` rules: empty lines and lines
/// starting with `#` skipped, a first line that is not numbers taken as a header, times
/// non-decreasing, delays and times within one year, loss in [0, 1], `default_loss` where
/// the third cell is missing or empty). 24 B a row.
pub fn read_delay_csv(r: impl Read, default_loss: f64) -> Result<Vec<Row>, TraceError> {
    read_delay_csv_into(r, default_loss, Vec::new())
}

/// [`read_delay_csv`] into `out` (empty, perhaps already reserved).
fn read_delay_csv_into(
    r: impl Read,
    default_loss: f64,
    mut out: Vec<Row>,
) -> Result<Vec<Row>, TraceError> {
    const MS: f64 = 1e6;
    let max = MAX_TRACE_MS as f64;
    let mut r = BufReader::with_capacity(1 << 16, r);
    let mut line = 0u64;
    let mut buf: Vec<u8> = Vec::with_capacity(128);
    let other = |n: u64| {
        input(format!(
            "line {n}: expected t_ms,delay_ms[,loss] (numbers), found other text"
        ))
    };
    loop {
        buf.clear();
        let n = (&mut r)
            .take(4096)
            .read_until(b'\n', &mut buf)
            .map_err(|e| input(format!("cannot read it ({e})")))?;
        if n == 0 {
            break;
        }
        line += 1;
        if buf.last() != Some(&b'\n') && n == 4096 {
            return Err(other(line));
        }
        let s = buf.trim_ascii();
        if s.is_empty() || s[0] == b'#' {
            continue;
        }
        let cells: Vec<&[u8]> = s.split(|&c| c == b',').map(|c| c.trim_ascii()).collect();
        let num = |c: &[u8]| std::str::from_utf8(c).ok()?.parse::<f64>().ok();
        let parsed = (|| {
            let t = num(cells.first()?)?;
            let d = num(cells.get(1)?)?;
            let l = match cells.get(2) {
                Some(c) if !c.is_empty() => num(c)?,
                _ => default_loss,
            };
            Some((t, d, l))
        })();
        let Some((t_ms, delay_ms, loss)) = parsed else {
            if line == 1 && out.is_empty() {
                continue; // a header
            }
            return Err(other(line));
        };
        if !(t_ms.is_finite() && delay_ms.is_finite() && loss.is_finite())
            || t_ms < 0.0
            || delay_ms < 0.0
            || !(0.0..=1.0).contains(&loss)
            || cells.len() > 3
            || t_ms > max
            || delay_ms > max
        {
            return Err(input(format!(
                "line {line}: expected t_ms and delay_ms in 0..{} and loss in [0, 1], found a value outside",
                python_g(max)
            )));
        }
        // Python's round(): half to even
        let at = SimTime::from_nanos((t_ms * MS).round_ties_even() as u64);
        let delay = SimDuration::from_nanos((delay_ms * MS).round_ties_even() as u64);
        if out.last().is_some_and(|last| at < last.at) {
            return Err(input(format!("line {line}: times must be non-decreasing")));
        }
        if out.len() == out.capacity() {
            let more = out.capacity().max(1 << 10);
            mem::fallible(|| out.try_reserve_exact(more)).map_err(|_| {
                TraceError::OutOfMemory(format!(
                    "out of memory reading a delay/loss CSV: {line} lines need {:.2} GB at 24 B a row, \
                     more than this process may allocate",
                    (2 * out.capacity() * 24) as f64 / 1e9
                ))
            })?;
        }
        out.push(Row { at, delay, loss });
    }
    if out.is_empty() {
        return Err(input("expected at least one row t_ms,delay_ms[,loss]"));
    }
    Ok(out)
}

/// `x` as Python's `{x:g}` writes the one-year bound (3.16224e+10).
fn python_g(x: f64) -> String {
    let e = x.abs().log10().floor() as i32;
    if (-4..6).contains(&e) {
        format!("{x}")
    } else {
        let m = x / 10f64.powi(e);
        let m = format!("{m:.5}");
        let m = m.trim_end_matches('0').trim_end_matches('.');
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

/// Time-weighted mean of the series' delay (ns) and loss over [0, duration) as the model
/// applies it (row i from its time until row i+1's, row 0 also before its time, the last row
/// for ever); over [0, the last row's time) when the duration is unknown or 0.
pub fn series_time_mean(rows: &[Row], duration_ns: Option<u64>) -> (f64, f64) {
    let Some(last) = rows.last() else {
        return (0.0, 0.0);
    };
    let end = duration_ns.filter(|&d| d > 0).unwrap_or(last.at.as_nanos());
    if end == 0 {
        return (rows[0].delay.as_nanos() as f64, rows[0].loss);
    }
    let (mut delay, mut loss) = (0.0f64, 0.0f64);
    for (i, row) in rows.iter().enumerate() {
        let lo = if i == 0 {
            0
        } else {
            row.at.as_nanos().min(end)
        };
        let hi = rows
            .get(i + 1)
            .map_or(end, |next| next.at.as_nanos().min(end));
        let span = hi.saturating_sub(lo) as f64;
        delay += span * row.delay.as_nanos() as f64;
        loss += span * row.loss;
    }
    (delay / end as f64, loss / end as f64)
}

fn series_digest(rows: &[Row]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for r in rows {
        for v in [r.at.as_nanos(), r.delay.as_nanos(), r.loss.to_bits()] {
            for b in v.to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    format!("fnv1a64:{h:016x}")
}

type SeriesKey = (Key, u64);
static SERIES_CACHE: Mutex<Vec<(SeriesKey, Series)>> = Mutex::new(Vec::new());

/// The delay/loss CSV at `path` (rows without a loss take `default_loss`), parsed once per
/// process while the file is unchanged; the same checks on the file and the budget as
/// [`load`], at 24 B a row.
pub fn load_delay_csv(
    path: &Path,
    default_loss: f64,
    budget_bytes: Option<u64>,
) -> Result<Series, TraceError> {
    let (mut file, key) = open_checked(path)?;
    let key = (key, default_loss.to_bits());
    let cache = SERIES_CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, s)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(s.clone());
    }
    drop(cache);
    let lines = count_lines(&mut file)?;
    let out = reserve_within(lines, budget_bytes, "a delay/loss CSV", "row")?;
    let rows = read_delay_csv_into(file.take(MAX_TRACE_BYTES), default_loss, out)?;
    let series = Series {
        digest: series_digest(&rows),
        rows: Arc::new(rows),
    };
    let mut cache = SERIES_CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= CACHE_ENTRIES {
        cache.remove(0);
    }
    cache.push((key, series.clone()));
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<u64>, String> {
        read_mahimahi(text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn the_reader_enforces_mm_links_rules_and_names_the_line() {
        assert_eq!(parse("1\n2\n3\n").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse(" 1 \r\n2\r\n3").unwrap(), vec![1, 2, 3]);
        assert!(parse("1\n\n3\n")
            .unwrap_err()
            .contains("line 2: invalid empty line"));
        assert!(parse("1\n2\n\n")
            .unwrap_err()
            .contains("line 3: invalid empty line"));
        assert!(parse("3\n2\n")
            .unwrap_err()
            .contains("line 2: timestamps must be non-decreasing"));
        assert!(parse("").unwrap_err().contains("at least one"));
        assert!(parse("0\n0\n").unwrap_err().contains("nonzero"));
        assert!(parse("1\nx\n")
            .unwrap_err()
            .contains("line 2: expected a millisecond"));
        assert!(parse("1\n-2\n").unwrap_err().contains("line 2"));
        assert!(parse("1\n\u{0661}\n")
            .unwrap_err()
            .contains("found other text"));
        assert!(parse("1\n99999999999999999999\n")
            .unwrap_err()
            .contains("line 2: expected a timestamp of at most"));
        assert!(parse(&format!("1\n{}\n", MAX_TRACE_MS + 1))
            .unwrap_err()
            .contains("at most"));
        assert!(parse(&format!("1\n{}\n", "7".repeat(10_000)))
            .unwrap_err()
            .contains("line 2: expected a millisecond timestamp"));
        // the file's bytes are never quoted
        assert!(!parse("1\nsecret\n").unwrap_err().contains("secret"));
    }

    #[test]
    fn a_long_trace_is_read_at_eight_bytes_a_line() {
        let text: String = (1..=100_000u64).map(|v| format!("{v}\n")).collect();
        let v = read_mahimahi(text.as_bytes()).unwrap();
        assert_eq!(v.len(), 100_000);
        assert!(v.capacity() <= 2 * v.len());
    }

    #[test]
    fn the_digest_follows_the_values() {
        assert_eq!(digest(&[1, 2]), digest(&[1, 2]));
        assert_ne!(digest(&[1, 2]), digest(&[1, 3]));
    }

    #[test]
    fn load_refuses_a_fifo_and_reads_a_file_once_while_it_is_unchanged() {
        let dir = std::env::temp_dir().join(format!("satcc-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.trace");
        std::fs::write(&f, "1\n2\n").unwrap();
        let a = load(&f, None).unwrap();
        let b = load(&f, None).unwrap();
        assert!(Arc::ptr_eq(&a.ms, &b.ms));
        std::fs::write(&f, "1\n2\n3\n").unwrap();
        // a rewrite changes the size (and mtime): read again
        assert_eq!(load(&f, None).unwrap().ms.as_slice(), &[1, 2, 3]);
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(load(&fifo, None)
            .unwrap_err()
            .to_string()
            .contains("regular file"));
        assert!(load(&dir.join("none"), None)
            .unwrap_err()
            .to_string()
            .contains("no such file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_trace_above_the_budget_is_refused_before_it_is_parsed_and_one_within_is_reserved_once() {
        let dir = std::env::temp_dir().join(format!("satcc-budget-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.trace");
        // 1,000 lines and a bad last one (no newline): 1,001 counted, 8,008 B needed
        std::fs::write(&f, format!("{}x", "1\n".repeat(1000))).unwrap();
        match load(&f, Some(8_000)) {
            Err(TraceError::TooLarge(m)) => assert!(m.contains("1001 lines needing"), "{m}"),
            other => panic!("expected TooLarge, got {other:?}"),
        }
        // within the budget the parse runs (and reaches the bad line)
        assert!(
            matches!(load(&f, Some(8_008)), Err(TraceError::Input(m)) if m.contains("line 1001"))
        );
        std::fs::write(&f, "1\n".repeat(1000)).unwrap();
        let ms = load(&f, Some(8_000)).unwrap().ms;
        assert_eq!((ms.len(), ms.capacity()), (1000, 1000));
        let c = dir.join("d.csv");
        std::fs::write(&c, "t_ms,delay_ms\n0,1\n5,2\n").unwrap();
        assert!(matches!(
            load_delay_csv(&c, 0.0, Some(3 * 24 - 1)),
            Err(TraceError::TooLarge(_))
        ));
        assert_eq!(load_delay_csv(&c, 0.0, Some(3 * 24)).unwrap().rows.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn csv(text: &str, loss: f64) -> Result<Vec<(u64, u64, f64)>, String> {
        read_delay_csv(text.as_bytes(), loss)
            .map(|v| {
                v.iter()
                    .map(|r| (r.at.as_nanos(), r.delay.as_nanos(), r.loss))
                    .collect()
            })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_delay_csv_is_read_with_the_scenario_layers_rules() {
        assert_eq!(
            csv("t_ms,delay_ms,loss\n# note\n\n0,20,0\n1000.5,40\n", 0.01).unwrap(),
            vec![(0, 20_000_000, 0.0), (1_000_500_000, 40_000_000, 0.01)]
        );
        // half to even, as Python's round()
        assert_eq!(csv("0.0000005,0.0000015\n", 0.0).unwrap()[0].0, 0);
        assert_eq!(csv("0.0000005,0.0000015\n", 0.0).unwrap()[0].1, 2);
        assert!(csv("0,1\nx,2\n", 0.0)
            .unwrap_err()
            .contains("line 2: expected t_ms,delay_ms"));
        assert!(csv("5,1\n4,1\n", 0.0)
            .unwrap_err()
            .contains("line 2: times must be non-decreasing"));
        assert_eq!(
            csv("0,1,2\n", 0.0).unwrap_err(),
            "line 1: expected t_ms and delay_ms in 0..3.16224e+10 and loss in [0, 1], found a value outside"
        );
        assert!(csv("0,1,0,7\n", 0.0)
            .unwrap_err()
            .contains("found a value outside"));
        assert!(csv("t,d\n", 0.0).unwrap_err().contains("at least one row"));
        assert!(!csv("1,2\nsecret,3\n", 0.0).unwrap_err().contains("secret"));
    }

    #[test]
    fn the_series_mean_holds_the_first_row_before_and_the_last_after() {
        let rows = read_delay_csv("1,0,0.2\n3,0,0.0\n".as_bytes(), 0.0).unwrap();
        let ms = 1_000_000;
        assert!((series_time_mean(&rows, Some(4 * ms)).1 - 0.15).abs() < 1e-12);
        assert!((series_time_mean(&rows, None).1 - 0.2).abs() < 1e-12);
        assert!((series_time_mean(&rows, Some(2 * ms)).1 - 0.2).abs() < 1e-12);
    }
}
