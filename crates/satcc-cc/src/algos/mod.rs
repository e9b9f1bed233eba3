//! One file per algorithm; `ALL` is the registry's list.

pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod cdg;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
mod kparams;
pub mod lp;
pub mod newreno;
pub mod nv;
pub mod reno;
pub mod scalable;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

use crate::info::AlgoInfo;

pub static ALL: &[&AlgoInfo] = &[
    &reno::INFO,
    &newreno::INFO,
    &hybla::INFO,
    &vegas::INFO,
    &yeah::INFO,
    &dctcp::INFO,
    &highspeed::INFO,
    &scalable::INFO,
    &bic::INFO,
    &htcp::INFO,
    &westwood::INFO,
    &illinois::INFO,
    &veno::INFO,
    &lp::INFO,
    &nv::INFO,
    &cdg::INFO,
    &cubic::INFO,
    &bbr::INFO,
    &bbr3::INFO,
];
