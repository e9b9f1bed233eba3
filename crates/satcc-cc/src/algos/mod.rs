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

use crate::registry::AlgoInfo;

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

#[cfg(test)]
mod tests {
    /// Every algorithm source (recursively) under `dir`.
    fn sources(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                out.push((p, text));
            }
        }
    }

    #[test]
    fn every_algorithm_with_an_optional_hook_says_it_has_it() {
        // The sender calls `on_ack_event` / `on_pkts_acked` only for algorithms whose
        // `has_in_ack_event` / `has_pkts_acked` is true (Linux's NULL check on the ops):
        // an override without the flag would silently never run.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/algos");
        let mut files = Vec::new();
        sources(&dir, &mut files);
        assert!(files.len() > 10);
        for (path, text) in &files {
            for (hook, flag) in [
                ("on_ack_event", "has_in_ack_event"),
                ("on_pkts_acked", "has_pkts_acked"),
            ] {
                // (built here so that this file's text holds neither)
                let hook = format!("fn {hook}(");
                let flag = format!("fn {flag}(&self) -> bool {{\n        true\n");
                assert_eq!(
                    text.matches(&hook).count(),
                    text.matches(&flag).count(),
                    "{}: {hook} without {flag}",
                    path.display()
                );
            }
        }
    }
}
