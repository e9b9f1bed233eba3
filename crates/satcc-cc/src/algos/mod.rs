//! One file per algorithm; `ALL` is the registry's list.

pub mod reno;

use crate::registry::AlgoInfo;

pub static ALL: &[&AlgoInfo] = &[&reno::INFO];
