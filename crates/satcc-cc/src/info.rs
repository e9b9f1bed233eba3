//! What the registry knows of one algorithm: each file in `algos/` declares its [`AlgoInfo`]
//! here, and `registry` lists them (so the algorithms and the registry do not import each
//! other).

use crate::params::ParamSpec;
use crate::{CongestionControl, ParamError, Params};

/// What the registry knows of one algorithm.
pub struct AlgoInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Paper/RFC and the Linux file it follows.
    pub source: &'static str,
    /// The `[flow.cc]` parameters, declared once in the algorithm's file.
    pub params: &'static [ParamSpec],
    pub deviations: &'static [&'static str],
    /// Linux `TCP_CONG_NEEDS_ECN`: the connection negotiates ECN whatever the scenario's
    /// `ecn` says (`tcp_ca_needs_ecn`), and the receiving end's algorithm sees each segment's
    /// CE mark (`CA_EVENT_ECN_IS_CE`/`_NO_CE`), which DCTCP turns into its own ECE echo.
    pub needs_ecn: bool,
    /// Build an instance from the scenario's parameters.
    pub build: fn(&Params) -> Result<Box<dyn CongestionControl>, ParamError>,
}
