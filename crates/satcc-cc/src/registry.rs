//! The one registry of algorithms by name.
//!
//! The registry name is the scenario's `cca` value, the CLI word, and (prefixed `satcc_`)
//! the `.name` of the BPF twin. `satcc cc list` / `satcc cc show NAME` print [`AlgoInfo`].

use crate::{algos, CongestionControl, ParamError, Params};

/// One documented parameter of an algorithm.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// What the registry knows of one algorithm.
pub struct AlgoInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Paper/RFC and the Linux file it follows.
    pub source: &'static str,
    pub params: &'static [ParamInfo],
    pub deviations: &'static [&'static str],
    /// Build an instance from the scenario's parameters.
    pub build: fn(&Params) -> Result<Box<dyn CongestionControl>, ParamError>,
}

/// Every algorithm, in the order `satcc cc list` prints them.
pub fn all() -> &'static [&'static AlgoInfo] {
    algos::ALL
}

pub fn names() -> Vec<&'static str> {
    all().iter().map(|a| a.name).collect()
}

pub fn info(name: &str) -> Option<&'static AlgoInfo> {
    all().iter().copied().find(|a| a.name == name)
}

/// Build the algorithm `name` with `params`.
pub fn lookup(name: &str, params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    match info(name) {
        Some(a) => (a.build)(params),
        None => Err(ParamError {
            key: "cca".into(),
            expected: format!("one of {:?}", names()),
            found: format!("{name:?}"),
        }),
    }
}
