//! The one registry of algorithms by name.
//!
//! The registry name is the scenario's `cca` value, the CLI word, and (prefixed `satcc_`)
//! the `.name` of the BPF twin. `satcc cc list` / `satcc cc show NAME` print [`AlgoInfo`].

pub use crate::info::AlgoInfo;
use crate::{algos, CongestionControl, ParamError, Params};

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

/// docs/cc-parameters.md: every algorithm's parameters as declared (a test in
/// tests/params_doc.rs fails when the file and the declarations differ).
pub fn params_markdown() -> String {
    let cell = |s: &str| {
        if s.is_empty() {
            "—".to_string()
        } else {
            s.replace('|', "\\|")
        }
    };
    let mut out = String::from(
        "# Congestion-control parameters\n\n\
         Generated from the declarations in `crates/satcc-cc/src/algos/` (`ParamSpec`); do not\n\
         edit by hand: `SATCC_BLESS=1 cargo test -p satcc-cc --test params_doc` rewrites it, and\n\
         the same test fails when it and the declarations differ. Set a parameter per flow in\n\
         `[flow.cc]` (docs/scenario.md); `satcc cc show NAME` prints the same table.\n\
         *kernel*: the Linux module parameter or `#define` it stands for; *BPF*: the define of\n\
         the BPF twin (docs/emulator.md), which takes `max(min, round(value × scale))` when a\n\
         scale is given.\n",
    );
    for a in all() {
        out.push_str(&format!("\n## `{}`\n\n", a.name));
        if a.params.is_empty() {
            out.push_str("No parameters.\n");
            continue;
        }
        out.push_str("| parameter | default | unit | values | kernel | BPF | scale | meaning |\n");
        out.push_str("|---|---|---|---|---|---|---|---|\n");
        for p in a.params {
            let scale = p
                .scale
                .map(|s| format!("× {} (≥ {})", s.factor, s.min))
                .unwrap_or_default();
            let row = [
                format!("`{}`", p.name),
                p.default_text(),
                p.unit.to_string(),
                p.range_text(),
                p.kernel.to_string(),
                p.bpf.to_string(),
                scale,
                p.doc.to_string(),
            ];
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dctcp_needs_ecn_as_in_linux() {
        // In Linux, TCP_CONG_NEEDS_ECN is set by tcp_dctcp.c alone among the algorithms
        // satcc has.
        let needing: Vec<&str> = all()
            .iter()
            .filter(|a| a.needs_ecn)
            .map(|a| a.name)
            .collect();
        assert_eq!(needing, ["dctcp"]);
    }

    #[test]
    fn an_algorithm_without_ack_hooks_is_unchanged_by_them() {
        // `has_ack_hooks() == false` lets the sender skip `on_ack_event` and `on_pkts_acked`
        // (Linux's NULL ops): for every such algorithm both must be no-ops, whatever they are
        // fed, or the skip would change its results.
        use crate::{AckEventFlags, AckSample, TcpState};
        use satcc_core::SimTime;
        let mut without = Vec::new();
        for a in all() {
            let mut cc = lookup(a.name, &Params::new()).unwrap();
            if cc.has_ack_hooks() {
                continue;
            }
            without.push(a.name);
            let mut tcp = TcpState::new(1448, 10);
            cc.on_init(SimTime::ZERO, &mut tcp);
            // (as text: a NaN field equals itself there)
            let (state, before) = (tcp.clone(), format!("{:?}", cc.debug_state()));
            for k in 1..50u64 {
                let now = SimTime::from_nanos(k * 7_000_000);
                let flags = AckEventFlags {
                    slow_path: k % 2 == 0,
                    window_update: k % 3 == 0,
                    ece: k % 5 == 0,
                };
                cc.on_ack_event(now, &mut tcp, flags);
                let ack = AckSample {
                    ack_seq: k * 1448,
                    pkts_acked: (k % 4) as u32,
                    acked_sacked: (k % 4) as u32,
                    rtt_us: Some(40_000 + k * 1_000),
                    prior_in_flight: 10,
                    ece: k % 5 == 0,
                    ..AckSample::default()
                };
                cc.on_pkts_acked(now, &mut tcp, &ack);
            }
            assert_eq!(tcp, state, "{}: TcpState", a.name);
            assert_eq!(
                format!("{:?}", cc.debug_state()),
                before,
                "{}: debug_state",
                a.name
            );
        }
        assert!(without.contains(&"reno"), "{without:?}");
    }

    #[test]
    fn an_algorithm_declaring_renos_cong_avoid_grows_as_reno_does() {
        // `reno_cong_avoid() == true` lets the sender call `algos::reno::reno_cong_avoid`
        // itself instead of `on_cong_avoid`: for every such algorithm both must leave the same
        // state, in slow start and congestion avoidance, limited by cwnd or not.
        use crate::algos::reno::reno_cong_avoid;
        use crate::{AckSample, TcpState};
        use satcc_core::SimTime;
        let mut declaring = Vec::new();
        for a in all() {
            let mut cc = lookup(a.name, &Params::new()).unwrap();
            if !cc.reno_cong_avoid() {
                continue;
            }
            declaring.push(a.name);
            let mut tcp = TcpState::new(1448, 10);
            cc.on_init(SimTime::ZERO, &mut tcp);
            let mut reno = tcp.clone();
            for k in 1..400u64 {
                let now = SimTime::from_nanos(k * 3_000_000);
                let ack = AckSample {
                    ack_seq: k * 1448,
                    pkts_acked: (k % 3) as u32,
                    acked_sacked: (k % 5) as u32,
                    rtt_us: Some(40_000 + (k % 9) * 1_000),
                    prior_in_flight: tcp.cwnd,
                    ..AckSample::default()
                };
                for t in [&mut tcp, &mut reno] {
                    t.is_cwnd_limited = k % 4 != 0;
                    t.max_packets_out = t.cwnd / 2 + (k % 3) as u32;
                    if k == 150 {
                        t.ssthresh = t.cwnd / 2;
                    }
                }
                cc.on_cong_avoid(now, &mut tcp, &ack);
                reno_cong_avoid(&mut reno, ack.acked_sacked);
                assert_eq!(tcp, reno, "{} after ACK {k}", a.name);
            }
            assert!(tcp.cwnd > 20, "{}: cwnd {} grew", a.name, tcp.cwnd);
        }
        assert!(declaring.contains(&"reno"), "{declaring:?}");
    }
}
