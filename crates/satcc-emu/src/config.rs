//! The emulator's configuration: one JSON document written by the Python runner
//! (`python/satcc/emu/linkd.py`) around the resolved scenario (RESOLVED: the value the run
//! resolved once, `satcc_core::scenario::Resolved`, the simulator's input too), plus the
//! options of this run. satcc-linkd does not resolve the scenario again: it reads its links
//! and routes as they are (`ResolvedLinks::from_json`, each direction checked as it is read)
//! and builds every link direction as the simulator builds it ([`Config::direction`], the
//! one `direction_of` of satcc-core's scenario module): nothing of the scenario is copied here.
//!
//! ```json
//! {"netns": "satcc-3f2a1c-emu", "seed": 1, "bin_ns": 100000000, "duration_ns": 5000000000,
//!  "series_path": "/tmp/x/link_series.jsonl",
//!  "scenario": RESOLVED,
//!  "links": [{"id": 0, "a_if": "satcc-l0a", "b_if": "satcc-l0b"}]}
//! ```
//! `id` is the scenario's link index; `a_if` is the emulator-side end of the veth whose other
//! end is in node a; frames read there go through direction `ab` and leave by `b_if`. `seed`,
//! `bin_ns` and `duration_ns` are options of the run (a benchmark keeps satcc-linkd running
//! for an hour); absent, the scenario's.

use satcc_core::dirspec;
use satcc_core::models::LinkBehaviour;
use satcc_core::scenario::ResolvedLinks;
use serde_json::Value;

/// Default spin window before a deadline (see README "Timing").
pub const DEFAULT_SPIN_NS: u64 = 200_000;
/// Default SCHED_FIFO priority (README "Timing": without it, a loaded 2-core machine delays
/// frames by milliseconds; the emulator sleeps between packets, so it cannot starve others,
/// and the kernel's RT throttling caps it at 95 % of a core in any case).
pub const DEFAULT_RT_PRIORITY: u32 = 10;
/// Default CPU wake-up latency requested while satcc-linkd runs (README "Timing", "Idle
/// CPUs"): 0 µs, so that idle CPUs poll rather than halt. On a VM whose host takes a halted
/// vCPU away, a wake-up then came milliseconds late (measured 2026-12-02 on a Firecracker
/// guest: a 20 Mbit/s run's lateness p99 0.45-7.2 ms without the request, 0.06-1.6 ms with it).
pub const DEFAULT_CPU_LATENCY_US: u32 = 0;

#[derive(Debug)]
pub struct Config {
    /// The resolved scenario's links and routes, as resolved by the run.
    pub scenario: ResolvedLinks,
    pub netns: Option<String>,
    /// The run's seed, bin width and duration when they are not the scenario's.
    seed: Option<u64>,
    bin_ns: Option<u64>,
    duration_ns: Option<u64>,
    pub series_path: Option<String>,
    pub spin_ns: u64,
    /// SCHED_FIFO priority for the emulator thread (0: stay in the normal class).
    pub rt_priority: u32,
    /// The CPU wake-up latency (µs) requested from the kernel's PM QoS for as long as the
    /// emulator runs (`/dev/cpu_dma_latency`; the request ends when the file is closed, at exit
    /// or crash alike). `null` in the document: no request.
    pub cpu_latency_us: Option<u32>,
    /// Send with `PACKET_QDISC_BYPASS` (default); `false` lets a capture inside the
    /// emulator's namespace see the frames satcc-linkd sends (`bench/emu/host_timing.py`).
    pub qdisc_bypass: bool,
    /// Receive through a mapped ring (`TPACKET_V2`, default) rather than `recvmmsg`.
    pub rx_ring: bool,
    /// The CPU the emulator thread is pinned to, if any. The runner pins it and steers the
    /// node namespaces' receive processing (RPS) to the other CPUs, so that a frame we send
    /// does not run the receiving TCP on our core (README "Timing").
    pub cpu: Option<usize>,
    pub links: Vec<Port>,
}

/// The emulator's two ends of one scenario link.
#[derive(Debug)]
pub struct Port {
    /// The scenario's link index.
    pub id: u32,
    pub a_if: String,
    pub b_if: String,
}

/// A configuration problem: the JSON path and what was wrong.
#[derive(Debug, PartialEq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err(path: &str, what: &str) -> ConfigError {
    ConfigError(format!("{path}: {what}"))
}

fn u64_at(v: &Value, key: &str, path: &str) -> Result<u64, ConfigError> {
    v.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| err(&format!("{path}.{key}"), "expected a non-negative integer"))
}

fn str_at(v: &Value, key: &str, path: &str) -> Result<String, ConfigError> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| err(&format!("{path}.{key}"), "expected a string"))
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| ConfigError(format!("invalid JSON: {e}")))?;
        let scenario = ResolvedLinks::from_json(
            v.get("scenario")
                .ok_or_else(|| err("scenario", "missing"))?,
        )
        .map_err(|e| err("scenario", &e))?;
        let links_v = v
            .get("links")
            .and_then(Value::as_array)
            .ok_or_else(|| err("links", "expected an array"))?;
        let mut links = Vec::new();
        for (i, l) in links_v.iter().enumerate() {
            let p = format!("links[{i}]");
            let id = u64_at(l, "id", &p)?;
            if id as usize >= scenario.scenario.links.len() {
                return Err(err(&format!("{p}.id"), "no such link in the scenario"));
            }
            links.push(Port {
                id: id as u32,
                a_if: str_at(l, "a_if", &p)?,
                b_if: str_at(l, "b_if", &p)?,
            });
        }
        let option = |key: &str| match v.get(key) {
            None => Ok(None),
            Some(_) => u64_at(&v, key, "").map(Some),
        };
        let bin_ns = option("bin_ns")?;
        if bin_ns == Some(0) {
            return Err(err("bin_ns", "must be > 0"));
        }
        Ok(Config {
            netns: v.get("netns").and_then(Value::as_str).map(str::to_string),
            seed: option("seed")?,
            bin_ns,
            duration_ns: option("duration_ns")?,
            series_path: v
                .get("series_path")
                .and_then(Value::as_str)
                .map(str::to_string),
            spin_ns: v
                .get("spin_ns")
                .and_then(Value::as_u64)
                .unwrap_or(DEFAULT_SPIN_NS),
            rt_priority: v
                .get("rt_priority")
                .and_then(Value::as_u64)
                .unwrap_or(DEFAULT_RT_PRIORITY as u64) as u32,
            cpu_latency_us: match v.get("cpu_latency_us") {
                None => Some(DEFAULT_CPU_LATENCY_US),
                Some(Value::Null) => None,
                Some(_) => {
                    let us = u64_at(&v, "cpu_latency_us", "")?;
                    Some(
                        u32::try_from(us).map_err(|_| {
                            err(".cpu_latency_us", "expected at most 4294967295 (µs)")
                        })?,
                    )
                }
            },
            qdisc_bypass: v
                .get("qdisc_bypass")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            rx_ring: v.get("rx_ring").and_then(Value::as_bool).unwrap_or(true),
            cpu: match v.get("cpu") {
                None | Some(Value::Null) => None,
                Some(_) => Some(u64_at(&v, "cpu", "")? as usize),
            },
            links,
            scenario,
        })
    }

    /// The run's seed: the scenario's unless the document gives one.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(self.scenario.scenario.seed)
    }

    /// The series' bin width, ns.
    pub fn bin_ns(&self) -> u64 {
        self.bin_ns.unwrap_or(self.scenario.scenario.bin_ns)
    }

    /// How long the series runs, ns.
    pub fn duration_ns(&self) -> u64 {
        self.duration_ns
            .unwrap_or(self.scenario.scenario.duration_ns)
    }

    /// Direction `ba` (false: a→b) of `port`'s link as the simulator builds it
    /// (`ResolvedLinks::direction`, `Resolved::direction`'s: the queue sized alike, the model
    /// seeded alike).
    pub fn direction(
        &self,
        port: &Port,
        ba: bool,
    ) -> Result<(dirspec::Direction, Box<dyn LinkBehaviour>), ConfigError> {
        let view = self
            .scenario
            .direction(dir_index(port.id, ba) as usize)
            .map_err(ConfigError)?;
        let model = view.behaviour(self.seed()).map_err(ConfigError)?;
        Ok((view.config, model))
    }
}

/// Link `id`'s direction index (`ab` = 2·id, `ba` = 2·id + 1), numbered as the simulator
/// numbers them (`satcc-sim` net.rs), so a direction's loss stream is derived from the seed
/// alike.
pub fn dir_index(link_id: u32, ba: bool) -> u64 {
    2 * link_id as u64 + u64::from(ba)
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::dirspec::QueueSpec;
    use satcc_core::{SimDuration, SimTime};

    /// A one-link scenario resolved by satcc-core, wrapped as the runner wraps it.
    fn doc(ab: Value, ba: Value) -> String {
        let flow = serde_json::json!({"id": 0, "src": 0, "dst": 1, "cca": "reno", "cc": {},
            "start_ns": 0, "size_bytes": null, "mss": 1448, "sack": true, "timestamps": true,
            "window_scaling": true, "rwnd_bytes": 33554432, "ecn": false, "initial_cwnd": 10,
            "pacing": "auto", "delayed_ack": true, "min_rto_ns": 200000000});
        let s = serde_json::json!({"name": "t", "seed": 7, "duration_ns": 1_000_000_000u64,
            "bin_ns": 100_000_000, "nodes": ["a", "b"],
            "links": [{"a": 0, "b": 1, "ab": ab, "ba": ba}], "flows": [flow]});
        let r = satcc_core::scenario::resolve_json(&s).map_err(|e| e.to_string());
        let scenario = match r {
            Ok(r) => serde_json::to_value(&r).unwrap(),
            Err(_) => s, // refused by the resolver: linkd must refuse it too
        };
        serde_json::json!({"netns": "satcc-x-emu", "scenario": scenario,
            "links": [{"id": 0, "a_if": "satcc-l0a", "b_if": "satcc-l0b"}]})
        .to_string()
    }

    fn full() -> String {
        doc(
            serde_json::json!({"rate_bps": 20000000, "delay_ns": 25000000, "loss": 0.01,
                "queue": {"packets": 100}, "ecn_threshold_pkts": 20}),
            serde_json::json!({"rate_bps": 10000000, "delay_ns": 25000000,
                "queue": {"bdp": 1.0}, "model": null}),
        )
    }

    #[test]
    fn a_full_document_parses_with_units_in_place() {
        let c = Config::parse(&full()).unwrap();
        assert_eq!(c.seed(), 7);
        assert_eq!(c.bin_ns(), 100_000_000);
        assert_eq!(c.spin_ns, DEFAULT_SPIN_NS);
        assert_eq!(c.cpu, None);
        let l = &c.links[0];
        let (ab, mut ab_model) = c.direction(l, false).unwrap();
        let st = ab_model.state_at(SimTime::ZERO);
        assert_eq!(st.rate_bps, 20_000_000);
        assert_eq!(st.delay, SimDuration::from_millis(25));
        assert_eq!(ab.queue, QueueSpec::Packets(100));
        assert_eq!(ab.ecn_threshold_pkts(), Some(20));
        // 1 BDP of 10 Mbit/s x the 50 ms RTT, as the resolver sized it
        let (ba, mut ba_model) = c.direction(l, true).unwrap();
        assert_eq!(ba.queue, QueueSpec::Bytes(62_500));
        assert_eq!(ba_model.state_at(SimTime::ZERO).loss, 0.0);
    }

    #[test]
    fn the_wake_up_latency_request_is_zero_unless_the_document_says_otherwise() {
        let mut v: Value = serde_json::from_str(&full()).unwrap();
        assert_eq!(Config::parse(&full()).unwrap().cpu_latency_us, Some(0));
        v["cpu_latency_us"] = serde_json::json!(null);
        assert_eq!(Config::parse(&v.to_string()).unwrap().cpu_latency_us, None);
        v["cpu_latency_us"] = serde_json::json!(20);
        assert_eq!(
            Config::parse(&v.to_string()).unwrap().cpu_latency_us,
            Some(20)
        );
        v["cpu_latency_us"] = serde_json::json!(-1);
        assert_eq!(
            Config::parse(&v.to_string()).unwrap_err().0,
            ".cpu_latency_us: expected a non-negative integer"
        );
    }

    #[test]
    fn the_runs_options_override_the_scenarios_seed_bins_and_duration() {
        let mut v: Value = serde_json::from_str(&full()).unwrap();
        v["seed"] = serde_json::json!(3);
        v["duration_ns"] = serde_json::json!(3_600_000_000_000u64);
        let c = Config::parse(&v.to_string()).unwrap();
        assert_eq!((c.seed(), c.bin_ns()), (3, 100_000_000));
        assert_eq!(c.duration_ns(), 3_600_000_000_000);
        v["bin_ns"] = serde_json::json!(0);
        assert_eq!(
            Config::parse(&v.to_string()).unwrap_err().0,
            "bin_ns: must be > 0"
        );
        v["bin_ns"] = serde_json::json!(1);
        v["links"][0]["id"] = serde_json::json!(1);
        assert_eq!(
            Config::parse(&v.to_string()).unwrap_err().0,
            "links[0].id: no such link in the scenario"
        );
    }

    #[test]
    fn a_models_direction_is_the_simulators_state_for_state() {
        // satcc-core's Starlink MODEL dictionary (its models/mod.rs tests read it too)
        let m: Value = serde_json::from_str(include_str!(
            "../../satcc-core/src/models/testdata/starlink.json"
        ))
        .unwrap();
        let mut ba = serde_json::json!({"rate_bps": 100000000, "delay_ns": 25000000,
            "queue": {"packets": 1000}});
        ba["model"] = m;
        let text = doc(
            serde_json::json!({"rate_bps": 20000000, "delay_ns": 25000000,
                "queue": {"packets": 100}}),
            ba,
        );
        let c = Config::parse(&text).unwrap();
        let (_, mut emu) = c.direction(&c.links[0], true).unwrap();
        // the simulator's build: direction 1 of the resolved scenario, its seed
        let v: Value = serde_json::from_str(&text).unwrap();
        let resolved = satcc_core::scenario::Resolved::from_json(&v["scenario"]).unwrap();
        let mut sim = resolved.direction(1).unwrap().behaviour(7).unwrap();
        for k in 0..200u64 {
            let t = SimTime::from_nanos(k * 250_000_000);
            assert_eq!(emu.state_at(t), sim.state_at(t));
        }
    }

    #[test]
    fn a_directions_clock_offsets_its_rate_as_in_the_simulator() {
        // clock_ppm (a fixed offset or scenario.clock_tolerance's draw, resolved once): the
        // serialiser's rate is rate x (1 + ppm / 1e6) in satcc-linkd and the simulator alike
        let text = doc(
            serde_json::json!({"rate_bps": 100000000, "delay_ns": 500000,
                "queue": {"packets": 50}, "clock_ppm": 63.124}),
            serde_json::json!({"rate_bps": 100000000, "delay_ns": 500000,
                "queue": {"packets": 50}, "clock_ppm": -1000.0}),
        );
        let c = Config::parse(&text).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let resolved = satcc_core::scenario::Resolved::from_json(&v["scenario"]).unwrap();
        for (ba, rate) in [(false, 100_006_312), (true, 99_900_000)] {
            let (_, mut emu) = c.direction(&c.links[0], ba).unwrap();
            let mut sim = resolved
                .direction(usize::from(ba))
                .unwrap()
                .behaviour(7)
                .unwrap();
            assert_eq!(emu.state_at(SimTime::ZERO).rate_bps, rate);
            assert_eq!(emu.state_at(SimTime::ZERO), sim.state_at(SimTime::ZERO));
        }
        // beyond the tolerance a link takes: refused, naming the direction
        let e = Config::parse(&text.replace("-1000.0", "-1500.0")).unwrap_err();
        assert!(
            e.0.contains("link[0].ba") && e.0.contains("clock_ppm"),
            "{e}"
        );
    }

    #[test]
    fn the_routes_the_run_resolved_are_read_not_computed_again() {
        // the direction's "1 BDP" queue is sized with the largest RTT the document's routes
        // give (here 100 ms instead of the scenario's 50 ms): satcc-linkd resolves nothing
        let mut v: Value = serde_json::from_str(&full()).unwrap();
        v["scenario"]["routes"]["max_rtt_ns"][1] = serde_json::json!(100_000_000u64);
        let c = Config::parse(&v.to_string()).unwrap();
        let (ba, _) = c.direction(&c.links[0], true).unwrap();
        assert_eq!(ba.queue, QueueSpec::Bytes(125_000));
    }

    #[test]
    fn a_scenario_not_resolved_or_with_foreign_routes_is_rejected() {
        let mut v: Value = serde_json::from_str(&full()).unwrap();
        v["scenario"]["routes"]["max_rtt_ns"]
            .as_array_mut()
            .unwrap()
            .pop();
        let e = Config::parse(&v.to_string()).unwrap_err();
        assert!(e.0.contains("not the routes of this scenario"), "{e}");
        v["scenario"].as_object_mut().unwrap().remove("routes");
        let e = Config::parse(&v.to_string()).unwrap_err();
        assert!(e.0.contains("not yet resolved"), "{e}");
    }

    #[test]
    fn a_cpu_is_read_when_given_and_must_be_a_non_negative_integer() {
        let mut v: Value = serde_json::from_str(&full()).unwrap();
        v["cpu"] = serde_json::json!(1);
        assert_eq!(Config::parse(&v.to_string()).unwrap().cpu, Some(1));
        v["cpu"] = serde_json::json!(-1);
        let e = Config::parse(&v.to_string()).unwrap_err();
        assert!(e.0.contains("cpu"), "{e}");
    }

    #[test]
    fn a_loss_outside_zero_one_is_rejected() {
        let e = Config::parse(&full().replace("0.01", "1.5")).unwrap_err();
        assert!(e.0.contains("link[0].ab.loss"), "{e}");
    }
}
