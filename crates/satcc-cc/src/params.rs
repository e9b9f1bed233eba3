//! Per-algorithm parameters from the scenario's `[flow.cc]` table.
//!
//! Each parameter is declared once, as a [`ParamSpec`] in its algorithm's file (name, unit,
//! kind with default and range, kernel scale, Linux module parameter, BPF define, one-line
//! doc). Everything else is derived from that declaration: the checks and error texts of
//! `cc = {...}` ([`Params::check`], the typed getters), the defaults, `cc_info` (what Python,
//! `satcc cc show` and the BPF builder see), the integers a BPF twin is compiled with
//! ([`ParamSpec::kernel_value`]) and docs/cc-parameters.md ([`crate::registry::params_markdown`]).
//! Unknown keys are an error (a typo in a scenario must not silently run the default).

use std::collections::BTreeMap;
use std::fmt;

/// One parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Num(f64),
    Bool(bool),
    Str(String),
    /// A table of (x, y) points, e.g. CUBIC's (RTT, factor) table for `k_mode = "table"`.
    Points(Vec<(f64, f64)>),
}

/// A bad parameter: which key, what was expected, what was found.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub key: String,
    pub expected: String,
    pub found: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cc.{}: expected {}, found {}",
            self.key, self.expected, self.found
        )
    }
}

impl std::error::Error for ParamError {}

/// The `[flow.cc]` table of one flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(BTreeMap<String, ParamValue>);

impl Params {
    pub fn new() -> Self {
        Params(BTreeMap::new())
    }

    /// The `cc` table of a resolved flow (`satcc_core::scenario::Flow::cc`): numbers,
    /// booleans, strings and lists of `[x, y]` pairs; anything else is refused by key.
    pub fn from_json(table: &serde_json::Map<String, serde_json::Value>) -> Result<Params, String> {
        use serde_json::Value;
        let mut params = Params::new();
        for (key, v) in table {
            let pair = |p: &Value| match p.as_array().map(Vec::as_slice) {
                Some([x, y]) => x.as_f64().zip(y.as_f64()),
                _ => None,
            };
            let value = match v {
                Value::Bool(b) => ParamValue::Bool(*b),
                Value::Number(n) => ParamValue::Num(n.as_f64().unwrap_or(f64::NAN)),
                Value::String(s) => ParamValue::Str(s.clone()),
                Value::Array(rows) => ParamValue::Points(
                    rows.iter()
                        .map(pair)
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| format!("cc.{key}: expected a list of [x, y] pairs"))?,
                ),
                _ => {
                    return Err(format!(
                        "cc.{key}: expected a number, boolean, string or list of [x, y] pairs"
                    ))
                }
            };
            params.insert(key, value);
        }
        Ok(params)
    }

    pub fn with(mut self, key: &str, value: ParamValue) -> Self {
        self.0.insert(key.to_string(), value);
        self
    }

    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    pub fn insert(&mut self, key: &str, value: ParamValue) {
        self.0.insert(key.to_string(), value);
    }

    fn err(key: &str, expected: &str, found: &ParamValue) -> ParamError {
        ParamError {
            key: key.into(),
            expected: expected.into(),
            found: format!("{found:?}"),
        }
    }

    /// Check every key against the algorithm's declarations: unknown keys, kinds, ranges.
    pub fn check(&self, specs: &[ParamSpec]) -> Result<(), ParamError> {
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        self.check_known(&names)?;
        specs.iter().try_for_each(|s| s.check(self))
    }

    /// Reject keys the algorithm does not define.
    pub fn check_known(&self, known: &[&str]) -> Result<(), ParamError> {
        match self.0.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(ParamError {
                key: k.clone(),
                expected: format!("one of {known:?}"),
                found: "an unknown parameter".into(),
            }),
            None => Ok(()),
        }
    }

    /// A number, or `default` when absent.
    pub fn num(&self, key: &str, default: f64) -> Result<f64, ParamError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(ParamValue::Num(x)) if x.is_finite() => Ok(*x),
            Some(v) => Err(Self::err(key, "a finite number", v)),
        }
    }

    /// A number within [lo, hi].
    pub fn num_in(&self, key: &str, default: f64, lo: f64, hi: f64) -> Result<f64, ParamError> {
        let x = self.num(key, default)?;
        if x < lo || x > hi {
            return Err(ParamError {
                key: key.into(),
                expected: format!("a number in [{lo}, {hi}]"),
                found: format!("{x}"),
            });
        }
        Ok(x)
    }

    pub fn bool(&self, key: &str, default: bool) -> Result<bool, ParamError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(ParamValue::Bool(b)) => Ok(*b),
            Some(v) => Err(Self::err(key, "true or false", v)),
        }
    }

    /// One of `choices`, or `default`.
    pub fn choice(&self, key: &str, default: &str, choices: &[&str]) -> Result<String, ParamError> {
        match self.0.get(key) {
            None => Ok(default.to_string()),
            Some(ParamValue::Str(s)) if choices.contains(&s.as_str()) => Ok(s.clone()),
            Some(v) => Err(Self::err(key, &format!("one of {choices:?}"), v)),
        }
    }

    pub fn points(&self, key: &str) -> Result<Option<Vec<(f64, f64)>>, ParamError> {
        match self.0.get(key) {
            None => Ok(None),
            Some(ParamValue::Points(p)) => Ok(Some(p.clone())),
            Some(v) => Err(Self::err(key, "a list of [x, y] pairs", v)),
        }
    }
}

/// Declare an algorithm's parameters once: `declare_params! { ALPHA = ParamSpec::int(..)..; }`
/// makes `param::ALPHA` (read it with its typed getter) and `PARAMS` (the registry's list,
/// in declaration order).
macro_rules! declare_params {
    ($( $(#[$m:meta])* $id:ident = $spec:expr; )*) => {
        /// The `[flow.cc]` parameters, one declaration each (docs/cc-parameters.md).
        pub mod param {
            #[allow(unused_imports)]
            use $crate::params::ParamSpec;
            $( $(#[$m])* pub const $id: ParamSpec = $spec; )*
        }
        /// Every parameter, in the order `satcc cc show` prints them.
        pub const PARAMS: &[$crate::params::ParamSpec] = &[$(param::$id),*];
    };
}
pub(crate) use declare_params;

/// What values a parameter takes, with its default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A finite number in [lo, hi].
    Num {
        default: f64,
        lo: f64,
        hi: f64,
    },
    /// A whole number in [lo, hi]: kernel module parameters are integers, and silently
    /// truncating a scenario's fraction would hide a typo.
    Int {
        default: u64,
        lo: u64,
        hi: u64,
    },
    Bool {
        default: bool,
    },
    /// One of `words`, each with the integer the kernel (the BPF twin) takes for it.
    Choice {
        default: &'static str,
        words: &'static [(&'static str, u32)],
    },
    /// A list of (x, y) points; absent unless given.
    Points,
}

/// How a real-valued parameter becomes the kernel's integer: `max(min, round(x · factor))`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub factor: f64,
    pub min: u64,
}

/// One parameter of one algorithm, declared once (see the module header).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub unit: &'static str,
    pub kind: Kind,
    /// The kernel's integer representation of a real value (`None`: the value itself).
    pub scale: Option<Scale>,
    /// The Linux module parameter or `#define` it stands for ("" when satcc's own).
    pub kernel: &'static str,
    /// The `-D` define of the BPF twin (`bpf/<name>.bpf.c`) it is compiled into ("" when none).
    pub bpf: &'static str,
    pub doc: &'static str,
}

impl ParamSpec {
    const fn new(name: &'static str, kind: Kind) -> Self {
        ParamSpec {
            name,
            unit: "-",
            kind,
            scale: None,
            kernel: "",
            bpf: "",
            doc: "",
        }
    }

    /// A real number in [lo, hi].
    pub const fn number(name: &'static str, default: f64, lo: f64, hi: f64) -> Self {
        Self::new(name, Kind::Num { default, lo, hi })
    }

    /// A whole number in [lo, hi].
    pub const fn int(name: &'static str, default: u64, lo: u64, hi: u64) -> Self {
        Self::new(name, Kind::Int { default, lo, hi })
    }

    pub const fn flag(name: &'static str, default: bool) -> Self {
        Self::new(name, Kind::Bool { default })
    }

    pub const fn choice(
        name: &'static str,
        default: &'static str,
        words: &'static [(&'static str, u32)],
    ) -> Self {
        Self::new(name, Kind::Choice { default, words })
    }

    pub const fn pairs(name: &'static str) -> Self {
        Self::new(name, Kind::Points)
    }

    pub const fn unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    pub const fn scale(mut self, factor: f64, min: u64) -> Self {
        self.scale = Some(Scale { factor, min });
        self
    }

    pub const fn kernel(mut self, kernel: &'static str) -> Self {
        self.kernel = kernel;
        self
    }

    pub const fn bpf(mut self, define: &'static str) -> Self {
        self.bpf = define;
        self
    }

    pub const fn doc(mut self, doc: &'static str) -> Self {
        self.doc = doc;
        self
    }

    /// The default of an integer parameter (compile-time error for any other kind).
    pub const fn default_u32(&self) -> u32 {
        match self.kind {
            Kind::Int { default, .. } => default as u32,
            _ => panic!("default_u32 of a parameter that is not an integer"),
        }
    }

    /// The default of a number or integer parameter.
    pub const fn default_f64(&self) -> f64 {
        match self.kind {
            Kind::Num { default, .. } => default,
            Kind::Int { default, .. } => default as f64,
            _ => panic!("default_f64 of a parameter that is not a number"),
        }
    }

    /// The default as text (`satcc cc show`, the docs): "" for points.
    pub fn default_text(&self) -> String {
        match self.kind {
            Kind::Num { default, .. } => format!("{default}"),
            Kind::Int { default, .. } => format!("{default}"),
            Kind::Bool { default } => format!("{default}"),
            Kind::Choice { default, .. } => default.to_string(),
            Kind::Points => String::new(),
        }
    }

    /// The accepted values as text.
    pub fn range_text(&self) -> String {
        match self.kind {
            Kind::Num { lo, hi, .. } => format!("[{lo}, {hi}]"),
            Kind::Int { lo, hi, .. } => format!("integer in [{lo}, {hi}]"),
            Kind::Bool { .. } => "true, false".to_string(),
            Kind::Choice { words, .. } => words.iter().map(|w| w.0).collect::<Vec<_>>().join(", "),
            Kind::Points => "[[x, y], ...]".to_string(),
        }
    }

    fn wrong_kind(&self) -> ! {
        panic!("parameter {:?} read as the wrong kind", self.name)
    }

    /// A number or integer parameter's value (the default when absent).
    pub fn num(&self, p: &Params) -> Result<f64, ParamError> {
        match self.kind {
            Kind::Num { default, lo, hi } => p.num_in(self.name, default, lo, hi),
            Kind::Int { .. } => self.u64(p).map(|x| x as f64),
            _ => self.wrong_kind(),
        }
    }

    /// An integer parameter's value.
    pub fn u64(&self, p: &Params) -> Result<u64, ParamError> {
        let Kind::Int { default, lo, hi } = self.kind else {
            self.wrong_kind()
        };
        let x = p.num(self.name, default as f64)?;
        if x.fract() != 0.0 || x < lo as f64 || x > hi as f64 {
            return Err(ParamError {
                key: self.name.into(),
                expected: format!("an integer in [{lo}, {hi}]"),
                found: format!("{x}"),
            });
        }
        Ok(x as u64)
    }

    /// An integer parameter whose range fits 32 bits.
    pub fn u32(&self, p: &Params) -> Result<u32, ParamError> {
        self.u64(p).map(|x| x as u32)
    }

    pub fn bool(&self, p: &Params) -> Result<bool, ParamError> {
        let Kind::Bool { default } = self.kind else {
            self.wrong_kind()
        };
        p.bool(self.name, default)
    }

    /// A choice parameter's word and the kernel's integer for it.
    pub fn word(&self, p: &Params) -> Result<(&'static str, u32), ParamError> {
        let Kind::Choice { default, words } = self.kind else {
            self.wrong_kind()
        };
        let names: Vec<&str> = words.iter().map(|w| w.0).collect();
        let chosen = p.choice(self.name, default, &names)?;
        Ok(*words
            .iter()
            .find(|w| w.0 == chosen)
            .expect("choice() returns one of the words"))
    }

    pub fn points(&self, p: &Params) -> Result<Option<Vec<(f64, f64)>>, ParamError> {
        let Kind::Points = self.kind else {
            self.wrong_kind()
        };
        p.points(self.name)
    }

    /// `max(min, round(x · factor))` with this parameter's scale (x rounded without one).
    pub fn quantise(&self, x: f64) -> u64 {
        match self.scale {
            Some(Scale { factor, min }) => ((x * factor).round() as u64).max(min),
            None => x.round() as u64,
        }
    }

    /// Check the value in `p` (absent is fine).
    pub fn check(&self, p: &Params) -> Result<(), ParamError> {
        match self.kind {
            Kind::Num { .. } | Kind::Int { .. } => self.num(p).map(drop),
            Kind::Bool { .. } => self.bool(p).map(drop),
            Kind::Choice { .. } => self.word(p).map(drop),
            Kind::Points => self.points(p).map(drop),
        }
    }

    /// The integer the kernel (the BPF twin) is given for the value in `p`: booleans 0/1,
    /// words their code, numbers through [`ParamSpec::quantise`]; `None` for points.
    pub fn kernel_value(&self, p: &Params) -> Result<Option<u64>, ParamError> {
        Ok(Some(match self.kind {
            Kind::Num { .. } => self.quantise(self.num(p)?),
            Kind::Int { .. } => self.u64(p)?,
            Kind::Bool { .. } => u64::from(self.bool(p)?),
            Kind::Choice { .. } => u64::from(self.word(p)?.1),
            Kind::Points => return Ok(None),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_is_named_in_the_error() {
        let p = Params::new().with("betta", ParamValue::Num(0.7));
        let e = p.check_known(&["beta"]).unwrap_err();
        assert_eq!(e.key, "betta");
    }

    #[test]
    fn wrong_type_is_reported_with_what_was_found() {
        let p = Params::new().with("beta", ParamValue::Bool(true));
        let e = p.num("beta", 0.7).unwrap_err();
        assert!(e.to_string().contains("finite number"));
    }

    const SPEC: ParamSpec = ParamSpec::int("alpha", 2, 0, 100);

    #[test]
    fn an_integer_parameter_refuses_fractions_and_defaults_when_absent() {
        let p = Params::new().with("alpha", ParamValue::Num(2.5));
        assert_eq!(SPEC.u32(&p).unwrap_err().expected, "an integer in [0, 100]");
        let p = Params::new().with("alpha", ParamValue::Num(3.0));
        assert_eq!(SPEC.u32(&p).unwrap(), 3);
        assert_eq!(SPEC.u32(&Params::new()).unwrap(), 2);
    }

    #[test]
    fn check_names_the_first_unknown_key_against_the_declarations() {
        let p = Params::new().with("alpah", ParamValue::Num(1.0));
        let e = p.check(&[SPEC]).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.expected.as_str()),
            ("alpah", "one of [\"alpha\"]")
        );
    }

    #[test]
    fn out_of_range_number_is_rejected() {
        let p = Params::new().with("beta", ParamValue::Num(1.5));
        assert!(p.num_in("beta", 0.7, 0.0, 1.0).is_err());
    }
}
