//! The unit grammar, once for every entry point: a scenario file, `--set`, a campaign's
//! matrix, a command-line flag and a Python keyword all read "600 ms", "20 Mbit/s",
//! "1.5 MB", "0.3 %" and "1 BDP" here (`python/satcc/units.py` wraps these functions).
//!
//! Every parser returns an exact integer in the base unit (nanoseconds, bit/s, bytes) or a
//! probability, and fails with a [`UnitError`] naming what it expected and what it found.
//! Numbers are read as decimals, not binary floats ("1.1 s" is exactly 1,100,000,000 ns); a
//! value that is not a whole number of base units ("0.5 ns", "0.1 B") is an error, not rounded.
//!
//! | quantity    | base unit | accepted units                                                  |
//! |-------------|-----------|-----------------------------------------------------------------|
//! | duration    | ns        | ns, us (µs), ms, s (sec), min, h, any case; bare: only 0         |
//! | rate        | bit/s     | bit/s, bits/s, bps, b/s (any case but b/B), prefixes k, M, G, T (10³ⁿ) or Ki, Mi, Gi, Ti (2¹⁰ⁿ), any case; B/s is bytes/s (×8); bare: only 0 |
//! | size        | bytes     | B, kB = KB, MB, GB, TB (10³ⁿ); KiB, MiB, GiB, TiB (2¹⁰ⁿ); a bare integer is bytes |
//! | probability | 1         | a number in [0, 1] (TOML `loss = 0.003`), or a percentage "0.3 %" |
//! | queue limit | -         | "N pkt", a size, or "x BDP"; never bare                          |
//! | clock offset | ppm      | "+20 ppm", "-50 ppm" (signed, at most 1000 either way); bare: only 0 |
//!
//! **The rule for bare numbers** (issue 44): a bare number is read only where it cannot be
//! misread. A duration or a rate needs a unit (is 10 seconds or milliseconds? bit/s or
//! Mbit/s?), except 0. A probability written *as a number* (a TOML or JSON number, a Python
//! float) is a fraction; written *as text* ("0.3", a flag, a quoted value) it needs "%"
//! (is "0.3" a fraction or a percentage?), except "0". Command-line flags are text, so
//! `--loss 0.3` is refused as `loss = "0.3"` is; `--loss 0.3%` and `loss = 0.003` are the same.

use std::fmt;

use crate::dirspec::QueueSpec;

pub const NS_PER_S: u64 = 1_000_000_000;
/// Upper bounds (docs/reliability.md): what the simulator's u64 arithmetic handles with room
/// to spare, and far beyond any satellite or terrestrial path.
pub const MAX_DURATION_NS: u64 = 366 * 86_400 * NS_PER_S;
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
pub const MAX_SIZE_BYTES: u64 = 1 << 50;
pub const MAX_PACKETS: u64 = 1_000_000_000;
pub const MAX_BDP: u64 = 1_000_000;
/// A number whose decimal exponent is beyond this is refused before any arithmetic on it.
pub const MAX_EXPONENT: i64 = 100;
/// A found value longer than this is cut in messages.
pub const DESCRIBE_CHARS: usize = 60;

pub const DURATION_HINT: &str =
    "a duration like '600 ms' or '1.5 s' (units: ns, us, ms, s, min, h)";
pub const RATE_HINT: &str = "a rate like '20 Mbit/s', '1 Gbit/s' or '500 kbit/s'";
pub const SIZE_HINT: &str = "a size like '1448 B', '1.5 MB' or '1 MiB' (bare integers are bytes)";
pub const PROBABILITY_HINT: &str = "a probability in [0, 1] like 1e-4 or '0.3 %'";
pub const QUEUE_HINT: &str = "a queue limit like '1000 pkt', '1.5 MB' or '1 BDP'";
pub const PACKETS_HINT: &str = "a packet count like '20 pkt' (or a bare integer)";
pub const CLOCK_HINT: &str =
    "a clock offset like '+20 ppm' or '-50 ppm' (at most 1000 ppm either way)";
/// The largest clock offset a link takes, either way (Ethernet's tolerance is 100 ppm).
pub const MAX_CLOCK_PPM: u64 = 1000;

/// A value as it arrived, before it is read as a quantity (from TOML, JSON or Python).
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    Bool(bool),
    /// An integer's decimal digits (Python's integers have no bound).
    Int(String),
    Float(f64),
    Str(String),
    Table,
    Array,
    /// Python's None (a value a dictionary may hold where TOML has none).
    None,
    /// Anything else, already described (a TOML date, ...).
    Other(String),
}

impl Raw {
    pub fn int(n: impl fmt::Display) -> Raw {
        Raw::Int(n.to_string())
    }

    /// A TOML/JSON value as the grammar sees it.
    pub fn from_json(v: &serde_json::Value) -> Raw {
        use serde_json::Value;
        match v {
            Value::Null => Raw::None,
            Value::Bool(b) => Raw::Bool(*b),
            Value::Number(n) if n.is_f64() => Raw::Float(n.as_f64().unwrap_or(f64::NAN)),
            Value::Number(n) => Raw::Int(n.to_string()),
            Value::String(s) => Raw::Str(s.clone()),
            Value::Array(_) => Raw::Array,
            Value::Object(_) => Raw::Table,
        }
    }
}

/// A value that could not be read as the expected quantity.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitError {
    pub expected: String,
    /// The value as messages show it ([`describe`]).
    pub found: String,
    pub why: Option<String>,
}

impl UnitError {
    pub fn new(expected: &str, found: &Raw, why: Option<String>) -> UnitError {
        UnitError {
            expected: expected.to_string(),
            found: describe(found),
            why,
        }
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, found {}", self.expected, self.found)?;
        if let Some(why) = &self.why {
            write!(f, " ({why})")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnitError {}

type Result<T> = std::result::Result<T, UnitError>;

/// How a found value is shown in messages: strings quoted as Python quotes them, tables and
/// arrays summarised, long values cut.
pub fn describe(v: &Raw) -> String {
    let text = match v {
        Raw::Bool(b) => b.to_string(),
        Raw::Int(d) => d.clone(),
        Raw::Float(x) => py_float(*x),
        Raw::Str(s) => py_str(s),
        Raw::Table => "a table".into(),
        Raw::Array => "an array".into(),
        Raw::None => "None".into(),
        Raw::Other(s) => s.clone(),
    };
    let n = text.chars().count();
    if n <= DESCRIBE_CHARS {
        text
    } else {
        let head: String = text.chars().take(DESCRIBE_CHARS - 12).collect();
        format!("{head}… ({n} chars)")
    }
}

/// A string quoted as Python's `repr` quotes it.
pub fn py_str(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// A float written as Python's `repr` writes it (shortest digits; exponent form outside
/// 1e-4..1e16).
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let mut d = digits.clone();
            while d.len() < int_len {
                d.push('0');
            }
            let (i, f) = d.split_at(int_len);
            format!("{sign}{i}.{}", if f.is_empty() { "0" } else { f })
        } else {
            format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let es = if exp < 0 { "-" } else { "+" };
        format!("{sign}{m}e{es}{:02}", exp.abs())
    }
}

/// A decimal number, exactly: `mantissa` × 10^`exp` (at most [`DIGITS`] significant digits;
/// digits beyond are dropped and remembered in `inexact`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decimal {
    pub negative: bool,
    pub mantissa: u128,
    pub exp: i64,
    inexact: bool,
}

const DIGITS: usize = 24;

impl Decimal {
    fn is_zero(&self) -> bool {
        self.mantissa == 0 && !self.inexact
    }

    fn ndigits(&self) -> i64 {
        if self.mantissa == 0 {
            1
        } else {
            self.mantissa.ilog10() as i64 + 1
        }
    }

    /// The exponent of the leading digit (Python's `Decimal.adjusted`).
    fn adjusted(&self) -> i64 {
        self.ndigits() - 1 + self.exp
    }

    /// Read `[+-]?(digits[_digits]*[.digits*] | .digits)([eE][+-]?digits)?` in full.
    fn parse(text: &str) -> Option<Decimal> {
        let b = text.as_bytes();
        let mut i = 0;
        let mut negative = false;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            negative = b[i] == b'-';
            i += 1;
        }
        let (mut mantissa, mut exp, mut inexact, mut seen, mut kept) = (0u128, 0i64, false, 0, 0);
        let mut push = |d: u8, after_point: bool, exp: &mut i64| {
            if mantissa == 0 && d == 0 {
                if after_point {
                    *exp -= 1;
                }
                return;
            }
            if kept < DIGITS {
                mantissa = mantissa * 10 + d as u128;
                kept += 1;
                if after_point {
                    *exp -= 1;
                }
            } else {
                inexact |= d != 0;
                if !after_point {
                    *exp += 1;
                }
            }
        };
        // integer part, with single underscores between digits
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            push(b[i] - b'0', false, &mut exp);
            seen += 1;
            i += 1;
            if i + 1 < b.len() && b[i] == b'_' && b[i + 1].is_ascii_digit() && i > start {
                i += 1;
            }
        }
        let int_digits = seen;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                push(b[i] - b'0', true, &mut exp);
                seen += 1;
                i += 1;
            }
            if int_digits == 0 && seen == 0 {
                return None;
            }
        }
        if seen == 0 {
            return None;
        }
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            let mut j = i + 1;
            let mut eneg = false;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                eneg = b[j] == b'-';
                j += 1;
            }
            let ds = j;
            let mut e: i64 = 0;
            while j < b.len() && b[j].is_ascii_digit() {
                e = e.saturating_mul(10).saturating_add((b[j] - b'0') as i64);
                j += 1;
            }
            if j == ds {
                return None;
            }
            exp = exp.saturating_add(if eneg { -e } else { e });
            i = j;
        }
        (i == b.len()).then_some(Decimal {
            negative,
            mantissa,
            exp,
            inexact,
        })
    }

    /// `self` × `scale` if it is a whole number at most `limit` (checked by the caller).
    fn times(&self, scale: u64) -> Option<u128> {
        let m = self.mantissa.checked_mul(scale as u128)?;
        if self.exp >= 0 {
            m.checked_mul(10u128.checked_pow(self.exp as u32)?)
                .filter(|_| !self.inexact)
        } else {
            let k = (-self.exp) as u32;
            match 10u128.checked_pow(k) {
                Some(p) if m.is_multiple_of(p) && !self.inexact => Some(m / p),
                Some(_) => None,
                None => (m == 0 && !self.inexact).then_some(0),
            }
        }
    }

    /// Whether `self` × `scale` > `limit`.
    fn above(&self, scale: u64, limit: u64) -> bool {
        if self.negative || self.mantissa == 0 {
            return false;
        }
        let m = self.mantissa * scale as u128; // < 10^24 × 2^50 < 2^130? scale ≤ 2^40·8
        if self.exp >= 0 {
            match 10u128
                .checked_pow(self.exp as u32)
                .and_then(|p| m.checked_mul(p))
            {
                Some(v) => v > limit as u128 || (v == limit as u128 && self.inexact),
                None => true,
            }
        } else {
            match 10u128.checked_pow((-self.exp) as u32) {
                Some(p) => {
                    m / p > limit as u128 || (m / p == limit as u128 && !m.is_multiple_of(p))
                }
                None => false,
            }
        }
    }

    fn to_f64(self) -> f64 {
        let text = format!(
            "{}{}e{}",
            if self.negative { "-" } else { "" },
            self.mantissa,
            self.exp
        );
        text.parse().unwrap_or(f64::NAN)
    }
}

/// Split a value into (number, unit); numbers come back with an empty unit.
fn split(v: &Raw, expected: &str) -> Result<(Decimal, String)> {
    let fail = |why: Option<String>| UnitError::new(expected, v, why);
    let check = |d: Decimal| -> Result<Decimal> {
        if !d.is_zero() && d.adjusted().abs() > MAX_EXPONENT {
            return Err(fail(Some(format!("a number beyond 10^±{MAX_EXPONENT}"))));
        }
        Ok(d)
    };
    match v {
        Raw::Int(digits) => Ok((
            check(Decimal::parse(digits).ok_or_else(|| fail(None))?)?,
            String::new(),
        )),
        Raw::Float(x) => {
            if !x.is_finite() {
                return Err(fail(None));
            }
            let d = Decimal::parse(&format!("{x:e}")).ok_or_else(|| fail(None))?;
            Ok((check(d)?, String::new()))
        }
        Raw::Str(s) => {
            let t = s.trim();
            // the longest prefix that reads as a number, then the unit
            let end = number_end(t);
            let d = Decimal::parse(&t[..end]).ok_or_else(|| fail(None))?;
            Ok((check(d)?, t[end..].trim_start().to_string()))
        }
        _ => Err(fail(None)),
    }
}

/// Where the number at the start of `t` ends (the regex `[+-]?(\d+(_\d+)*(\.\d*)?|\.\d+)([eE][+-]?\d+)?`).
fn number_end(t: &str) -> usize {
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    if digits(&mut i) {
        while i + 1 < b.len() && b[i] == b'_' && b[i + 1].is_ascii_digit() {
            i += 1;
            digits(&mut i);
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    } else if i < b.len() && b[i] == b'.' {
        let mut j = i + 1;
        if !digits(&mut j) {
            return 0;
        }
        i = j;
    } else {
        return 0;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if digits(&mut j) {
            i = j;
        }
    }
    i
}

fn at_most(d: &Decimal, scale: u64, limit: u64, hint: &str, v: &Raw, text: &str) -> Result<()> {
    if d.adjusted() > 20 || d.above(scale, limit) {
        return Err(UnitError::new(
            hint,
            v,
            Some(format!("above the limit of {text}")),
        ));
    }
    Ok(())
}

fn whole(d: &Decimal, scale: u64, hint: &str, v: &Raw, unit: &str) -> Result<u64> {
    d.times(scale)
        .and_then(|x| u64::try_from(x).ok())
        .ok_or_else(|| UnitError::new(hint, v, Some(format!("not a whole number of {unit}"))))
}

fn non_negative(d: &Decimal, hint: &str, v: &Raw) -> Result<()> {
    if d.negative && !d.is_zero() {
        return Err(UnitError::new(hint, v, Some("negative".into())));
    }
    Ok(())
}

/// The rule for a quantity that needs its unit (a duration, a rate, a clock offset): a bare
/// number is read only as 0 (`Ok(true)`: the caller returns its zero), any other bare number
/// is an error saying `why`; with a unit, `Ok(false)`.
fn bare_zero(d: &Decimal, unit: &str, hint: &str, v: &Raw, why: &str) -> Result<bool> {
    if !unit.is_empty() {
        return Ok(false);
    }
    if d.is_zero() {
        return Ok(true);
    }
    Err(UnitError::new(hint, v, Some(why.into())))
}

fn unknown(unit: &str) -> Option<String> {
    Some(format!("unknown unit {}", py_str(unit)))
}

fn duration_scale(unit: &str) -> Option<u64> {
    Some(match unit.to_lowercase().as_str() {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" | "sec" => NS_PER_S,
        "min" => 60 * NS_PER_S,
        "h" => 3600 * NS_PER_S,
        _ => return None,
    })
}

/// A duration in integer nanoseconds: "600 ms", "1.5 s", "250us", "2 min"; bare only 0.
pub fn duration_ns(v: &Raw) -> Result<u64> {
    let h = DURATION_HINT;
    let (d, unit) = split(v, h)?;
    if bare_zero(&d, &unit, h, v, "a bare number needs a unit")? {
        return Ok(0);
    }
    let scale = duration_scale(&unit).ok_or_else(|| UnitError::new(h, v, unknown(&unit)))?;
    non_negative(&d, h, v)?;
    at_most(&d, scale, MAX_DURATION_NS, h, v, "one year")?;
    whole(&d, scale, h, v, "nanoseconds")
}

fn prefix_scale(p: &str) -> Option<u64> {
    Some(match p.to_lowercase().as_str() {
        "" => 1,
        "k" => 1_000,
        "m" => 1_000_000,
        "g" => 1_000_000_000,
        "t" => 1_000_000_000_000,
        "ki" => 1 << 10,
        "mi" => 1 << 20,
        "gi" => 1 << 30,
        "ti" => 1 << 40,
        _ => return None,
    })
}

/// A rate unit's scale in bit/s: an SI or binary prefix (any case) and bit/s, bits/s, bps or
/// b/s (any case but the b), or B/s (bytes).
fn rate_scale(unit: &str) -> Option<u64> {
    let lower = unit.to_lowercase();
    for (word, bytes) in [
        ("bits/s", false),
        ("bit/s", false),
        ("bps", false),
        ("b/s", false),
    ] {
        if let Some(prefix) = lower.strip_suffix(word) {
            let written = &unit[prefix.len()..];
            // "B/s" and "Bps" are bytes; "bit/s" in any case is bits
            let bytes = bytes
                || (word == "b/s" && written.starts_with('B'))
                || (word == "bps" && written.starts_with('B'));
            if word == "bps" && bytes {
                return None; // "MBps": megabytes or megabits? refused
            }
            let p = &unit[..prefix.len()];
            return prefix_scale(p).map(|s| if bytes { s * 8 } else { s });
        }
    }
    None
}

/// A rate in integer bit/s: "20 Mbit/s", "1 Gbit/s", "20Mbps", "20 MBit/s", "2 MB/s"; bare
/// only 0.
pub fn rate_bps(v: &Raw) -> Result<u64> {
    let h = RATE_HINT;
    let (d, unit) = split(v, h)?;
    if bare_zero(
        &d,
        &unit,
        h,
        v,
        "a bare number needs a unit: bit/s, kbit/s, Mbit/s",
    )? {
        return Ok(0);
    }
    let scale = rate_scale(&unit).ok_or_else(|| UnitError::new(h, v, unknown(&unit)))?;
    non_negative(&d, h, v)?;
    at_most(&d, scale, MAX_RATE_BPS, h, v, "10 Tbit/s")?;
    whole(&d, scale, h, v, "bit/s")
}

fn size_scale(unit: &str) -> Option<u64> {
    Some(match unit {
        "B" | "byte" | "bytes" => 1,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    })
}

fn is_packet_unit(unit: &str) -> bool {
    matches!(
        unit.to_lowercase().as_str(),
        "pkt" | "pkts" | "packet" | "packets" | "p"
    )
}

/// A size in integer bytes: "1448 B", "1.5 MB" (10⁶), "64 KB" (10³), "1 MiB" (2²⁰), 65535.
pub fn size_bytes(v: &Raw) -> Result<u64> {
    let h = SIZE_HINT;
    let (d, unit) = split(v, h)?;
    let scale = if unit.is_empty() {
        1
    } else {
        size_scale(&unit).ok_or_else(|| {
            let mut why = format!("unknown unit {}", py_str(&unit));
            if unit.ends_with('b') || unit.to_lowercase().ends_with("bit") {
                why.push_str("; sizes are in bytes: write B, not b");
            } else if is_packet_unit(&unit) {
                why.push_str("; packets are not a size here");
            }
            UnitError::new(h, v, Some(why))
        })?
    };
    non_negative(&d, h, v)?;
    at_most(&d, scale, MAX_SIZE_BYTES, h, v, "1 PiB")?;
    whole(&d, scale, h, v, "bytes")
}

/// A probability in [0, 1]: a number (0.003, TOML `1e-4`) or a percentage ("0.3 %"); text
/// without "%" only for 0 (the rule for bare numbers above).
pub fn probability(v: &Raw) -> Result<f64> {
    let h = PROBABILITY_HINT;
    let (mut d, unit) = split(v, h)?;
    if unit == "%" {
        d.exp -= 2;
    } else if !unit.is_empty() {
        return Err(UnitError::new(h, v, unknown(&unit)));
    } else if let Raw::Str(s) = v {
        if !d.is_zero() {
            let t = s.trim();
            return Err(UnitError::new(
                h,
                v,
                Some(format!(
                    "a bare number in text is ambiguous: write '{t} %' for a percentage, \
                     or the fraction as a number (loss = {t} in TOML)"
                )),
            ));
        }
    }
    if (d.negative && !d.is_zero()) || d.above(1, 1) {
        return Err(UnitError::new(h, v, Some("out of range".into())));
    }
    Ok(d.to_f64().abs())
}

/// A clock's offset from its nominal frequency in parts per million, signed: "+20 ppm",
/// "-50 ppm", "0". The unit is required except for 0 (a bare 20 could be ppm, a fraction or
/// a percentage); at most [`MAX_CLOCK_PPM`] either way.
pub fn clock_ppm(v: &Raw) -> Result<f64> {
    let h = CLOCK_HINT;
    let (d, unit) = split(v, h)?;
    if bare_zero(&d, &unit, h, v, "a bare number needs its unit: ppm")? {
        return Ok(0.0);
    }
    if !unit.eq_ignore_ascii_case("ppm") {
        return Err(UnitError::new(h, v, unknown(&unit)));
    }
    let size = Decimal {
        negative: false,
        ..d
    };
    at_most(&size, 1, MAX_CLOCK_PPM, h, v, "1000 ppm either way")?;
    Ok(d.to_f64())
}

/// A whole number of packets: "20 pkt" or 20.
pub fn packets(v: &Raw) -> Result<u64> {
    let h = PACKETS_HINT;
    let (d, unit) = split(v, h)?;
    if !unit.is_empty() && !is_packet_unit(&unit) {
        return Err(UnitError::new(h, v, unknown(&unit)));
    }
    non_negative(&d, h, v)?;
    at_most(&d, 1, MAX_PACKETS, h, v, "1,000,000,000 packets")?;
    whole(&d, 1, h, v, "packets")
}

/// A drop-tail limit: packets, bytes or a BDP multiple (sized by the resolver along the
/// routes); never bare.
pub fn queue(v: &Raw) -> Result<QueueSpec> {
    let h = QUEUE_HINT;
    let (d, unit) = split(v, h)?;
    if unit.is_empty() {
        return Err(UnitError::new(
            h,
            v,
            Some("a bare number needs a unit: pkt, B/MB or BDP".into()),
        ));
    }
    if is_packet_unit(&unit) {
        at_most(&d, 1, MAX_PACKETS, h, v, "1,000,000,000 packets")?;
        let n = whole(&d, 1, h, v, "packets")?;
        if n < 1 || d.negative {
            return Err(UnitError::new(
                h,
                v,
                Some("a queue holds at least 1 packet".into()),
            ));
        }
        return Ok(QueueSpec::Packets(n));
    }
    if unit.eq_ignore_ascii_case("bdp") {
        if d.negative || d.is_zero() {
            return Err(UnitError::new(h, v, Some("must be positive".into())));
        }
        at_most(&d, 1, MAX_BDP, h, v, "1,000,000 BDP")?;
        return Ok(QueueSpec::Bdp(d.to_f64()));
    }
    let n = size_bytes(v).map_err(|_| UnitError::new(h, v, unknown(&unit)))?;
    if n < 1 {
        return Err(UnitError::new(
            h,
            v,
            Some("a queue holds at least 1 byte".into()),
        ));
    }
    Ok(QueueSpec::Bytes(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> Raw {
        Raw::Str(t.into())
    }

    #[test]
    fn durations_are_exact_and_bare_numbers_need_a_unit() {
        assert_eq!(duration_ns(&s("1.1 s")).unwrap(), 1_100_000_000);
        assert_eq!(duration_ns(&s("1e3 ms")).unwrap(), NS_PER_S);
        assert_eq!(duration_ns(&s("250 µs")).unwrap(), 250_000);
        assert_eq!(duration_ns(&s("10 MS")).unwrap(), 10_000_000);
        assert_eq!(duration_ns(&Raw::int(0)).unwrap(), 0);
        assert_eq!(
            duration_ns(&s("600")).unwrap_err().to_string(),
            format!("expected {DURATION_HINT}, found '600' (a bare number needs a unit)")
        );
        assert!(duration_ns(&s("0.5 ns"))
            .unwrap_err()
            .to_string()
            .contains("whole number"));
        assert!(duration_ns(&s("1e999999999 s"))
            .unwrap_err()
            .to_string()
            .contains("beyond 10^±100"));
    }

    #[test]
    fn rates_take_any_case_of_prefix_and_bit() {
        for (t, want) in [
            ("20 Mbit/s", 20_000_000),
            ("20MBit/s", 20_000_000),
            ("20 mbps", 20_000_000),
            ("20 Mbps", 20_000_000),
            ("2 MB/s", 16_000_000),
            ("1 Kibit/s", 1024),
        ] {
            assert_eq!(rate_bps(&s(t)).unwrap(), want, "{t}");
        }
        assert!(rate_bps(&s("20 MBps")).is_err());
        assert!(rate_bps(&s("10 Mbit")).is_err());
    }

    #[test]
    fn a_probability_in_text_needs_a_percent_sign() {
        assert_eq!(probability(&Raw::Float(0.003)).unwrap(), 0.003);
        assert_eq!(probability(&s("0.3 %")).unwrap(), 0.003);
        assert_eq!(probability(&s("0")).unwrap(), 0.0);
        assert_eq!(probability(&Raw::int(1)).unwrap(), 1.0);
        let e = probability(&s("0.1")).unwrap_err().to_string();
        assert!(e.contains("ambiguous") && e.contains("'0.1 %'"), "{e}");
        assert!(probability(&s("101 %")).is_err());
        assert!(probability(&Raw::Float(1.5)).is_err());
    }

    #[test]
    fn queues_and_messages_read_as_python_writes_them() {
        assert_eq!(queue(&s("1 BDP")).unwrap(), QueueSpec::Bdp(1.0));
        assert_eq!(queue(&s("64 KB")).unwrap(), QueueSpec::Bytes(64_000));
        assert_eq!(queue(&s("5 pkt")).unwrap(), QueueSpec::Packets(5));
        assert_eq!(py_float(1e-4), "0.0001");
        assert_eq!(py_float(1e30), "1e+30");
        assert_eq!(py_float(1.5), "1.5");
        assert_eq!(py_float(100.0), "100.0");
        assert_eq!(py_str("it's"), "\"it's\"");
        assert_eq!(
            describe(&s(&"x".repeat(100))),
            format!("'{}… (102 chars)", "x".repeat(47))
        );
    }
}
