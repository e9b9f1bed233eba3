//! One file per algorithm; `ALL` is the registry's list.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod hybla;
mod kparams;
pub mod newreno;
pub mod reno;
pub mod scalable;
pub mod vegas;
pub mod yeah;

use crate::registry::AlgoInfo;

pub static ALL: &[&AlgoInfo] = &[&reno::INFO, &newreno::INFO, &hybla::INFO, &vegas::INFO, &yeah::INFO, &dctcp::INFO, &highspeed::INFO, &scalable::INFO, &cubic::INFO, &bbr::INFO];
