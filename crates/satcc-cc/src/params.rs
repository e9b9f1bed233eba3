//! Per-algorithm parameters from the scenario's `[flow.cc]` table.
//!
//! Values arrive already typed from the scenario layer; each algorithm asks for the keys it
//! knows with a default equal to the kernel's, and unknown keys are an error (a typo in a
//! scenario must not silently run the default).

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

    #[test]
    fn out_of_range_number_is_rejected() {
        let p = Params::new().with("beta", ParamValue::Num(1.5));
        assert!(p.num_in("beta", 0.7, 0.0, 1.0).is_err());
    }
}
