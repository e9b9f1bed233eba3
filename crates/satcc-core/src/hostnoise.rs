//! Host timing noise: how long a host takes to answer a packet, as a distribution.
//!
//! A real host does not answer on a perfect clock. Between a frame reaching its NIC and the
//! host's answer leaving it lie the receive interrupt (coalesced on real NICs), the NET_RX
//! softirq and its scheduling (`net_rx_action`, NAPI budgets, ksoftirqd when busy), TCP's
//! processing (`tcp_v4_rcv` → `tcp_ack` → `tcp_write_xmit`, or `__tcp_ack_snd_check` at a
//! receiver) and the transmit path (`dev_queue_xmit`, the qdisc, the driver). A simulator
//! whose hosts answer instantly is perfectly periodic, and competing flows whose packets share
//! one packet-time grid phase-lock (Floyd & Jacobson, "On traffic phase effects in
//! packet-switched gateways", 1992): who wins then hinges on sub-microsecond RTT offsets.
//!
//! The simulator therefore delays every packet that reaches its destination host by a draw
//! from a measured turnaround distribution, before the host sees it; the host's answer leaves
//! at once. Packets into one host keep their order (the draw is clamped behind the previous
//! packet, as softirq processing is in order). A sender's and a receiver's turnarounds differ
//! (a sender answers an ACK with new data, and an ACK that arrives while the application holds
//! the socket lock in `sendmsg` waits in the socket backlog until `tcp_release_cb`; a receiver
//! answers data with an ACK from the softirq), so packets travelling towards a flow's sender
//! (ACKs, SYN-ACKs) draw from one distribution and packets towards its receiver (data, SYNs,
//! datagrams) from the other. Each is an inverse CDF given by quantile points, interpolated
//! linearly between them.
//!
//! The default ([`HostNoise::kernel`]) was measured on the real Linux kernel through
//! satcc-linkd (`bench/emu/host_timing.py`, README "Host timing noise"): the turnaround of a
//! sender (ACK in → next data out) and of a receiver (data in → ACK out), captured on the
//! wire side of the hosts.

use crate::rng::Rng;
use crate::time::SimDuration;

/// Quantile points (probability, nanoseconds) of the kernel's sender turnaround (ACK in →
/// next data segment out), measured on 2026-11-24: Linux 6.18, veth, GSO/GRO/TSO off, a 2-core
/// VM with every other process at nice 19, CUBIC through satcc-linkd; pooled over five 10 s
/// runs (three of one flow at 100 Mbit/s, 20 ms RTT; two flows at 100 Mbit/s; one flow at
/// 20 Mbit/s, 50 ms). `bench/emu/host_timing.py --table` printed these lines; the runs'
/// quantiles are in `bench/emu/host_timing/calibration-2026-11-24.jsonl`, figures in
/// BENCHMARKS.md "Host timing noise". 52,244 samples, mean 12.4 µs.
#[rustfmt::skip]
pub const KERNEL_SENDER_QUANTILES_NS: &[(f64, u64)] = &[(0.0, 921), (0.01, 5629), (0.05, 6670), (0.1, 7350), (0.2, 8473), (0.3, 9524), (0.4, 10515), (0.5, 11327), (0.6, 12047), (0.7, 12749), (0.8, 13560), (0.9, 15022), (0.95, 20099), (0.99, 34832), (0.999, 192195), (1.0, 1985183)];
/// The same for the receiver's turnaround (data segment in → ACK out): 139,185 samples, mean
/// 28.2 µs (bimodal near 14 and 28 µs; the tail above the 90th percentile comes from the
/// 20 Mbit/s run, whose idle CPU wakes up late).
#[rustfmt::skip]
pub const KERNEL_RECEIVER_QUANTILES_NS: &[(f64, u64)] = &[(0.0, 436), (0.01, 4506), (0.05, 6609), (0.1, 8523), (0.2, 13650), (0.3, 15973), (0.4, 24487), (0.5, 26318), (0.6, 27852), (0.7, 29434), (0.8, 31352), (0.9, 35397), (0.95, 45854), (0.99, 116212), (0.999, 560939), (1.0, 1942194)];

/// Every host's turnarounds: towards a flow's sender and towards its receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct HostNoise {
    /// Drawn for packets that travel towards a flow's sender (ACKs).
    pub sender: Turnaround,
    /// Drawn for packets that travel towards a flow's receiver (data).
    pub receiver: Turnaround,
}

impl HostNoise {
    /// The measured Linux turnarounds ([`KERNEL_SENDER_QUANTILES_NS`],
    /// [`KERNEL_RECEIVER_QUANTILES_NS`]).
    pub fn kernel() -> HostNoise {
        let t = |q: &[(f64, u64)]| {
            Turnaround::new(q.to_vec()).expect("the preset tables are well formed")
        };
        HostNoise {
            sender: t(KERNEL_SENDER_QUANTILES_NS),
            receiver: t(KERNEL_RECEIVER_QUANTILES_NS),
        }
    }

    /// Whether every draw is zero (nothing to draw: runs stay as without noise).
    pub fn is_zero(&self) -> bool {
        self.sender.is_zero() && self.receiver.is_zero()
    }

    /// One turnaround for a packet reaching its destination host; `to_receiver` for packets
    /// travelling towards a flow's receiver.
    pub fn sample(&self, to_receiver: bool, rng: &mut Rng) -> SimDuration {
        if to_receiver {
            self.receiver.sample(rng)
        } else {
            self.sender.sample(rng)
        }
    }
}

/// A turnaround distribution: an inverse CDF through quantile points.
#[derive(Clone, Debug, PartialEq)]
pub struct Turnaround {
    /// (cumulative probability, delay in ns), probabilities strictly increasing from 0 to 1,
    /// delays non-decreasing.
    points: Vec<(f64, u64)>,
    /// Between each two points, what a draw there reads, worked out once ([`Segment`]).
    segments: Vec<Segment>,
    /// Per slice of [0, 1) (`SLICES` equal ones), the segments a draw in it can fall in: (the
    /// segment at the slice's start, the number of points strictly inside the slice, each of
    /// which moves a draw at or above it one segment on). A draw is one lookup and, in the
    /// few slices a point falls inside, a comparison or two, instead of a binary search over
    /// every point (a draw per packet reaching a host).
    slices: [(u32, u32); SLICES],
}

/// The interval between two quantile points (p0, d0) and (p1, d1), as a draw in it reads it:
/// the delay at u is `d0 + (d1 - d0) · (u - p0) / (p1 - p0)` with `p1 - p0` and `d1 - d0`
/// (as f64) computed here rather than per draw (the same values, so the same delay).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Segment {
    p0: f64,
    /// p1: a draw at or above it lies in a later segment.
    p1: f64,
    /// p1 - p0.
    width: f64,
    d0: u64,
    /// (d1 - d0) as f64.
    span: f64,
}

/// The slices of [0, 1) in [`Turnaround`]'s lookup: a power of two, so that `u * SLICES` is
/// exact and its integer part is the slice of u; for a draw `Rng::unit_f64(x)` that is the
/// top bits of x, `x >> SLICE_SHIFT`.
const SLICES: usize = 64;
const SLICE_SHIFT: u32 = 64 - SLICES.trailing_zeros();

impl Turnaround {
    /// The distribution through `points`; an error names what is wrong.
    pub fn new(points: Vec<(f64, u64)>) -> Result<Turnaround, String> {
        if points.len() < 2 {
            return Err("expected at least two quantile points".into());
        }
        if points[0].0 != 0.0 || points[points.len() - 1].0 != 1.0 {
            return Err("expected the first quantile at probability 0 and the last at 1".into());
        }
        for w in points.windows(2) {
            if w[1].0.partial_cmp(&w[0].0) != Some(std::cmp::Ordering::Greater) {
                return Err(format!(
                    "expected increasing probabilities, found {} after {}",
                    w[1].0, w[0].0
                ));
            }
            if w[1].1 < w[0].1 {
                return Err(format!(
                    "expected non-decreasing delays, found {} ns after {} ns",
                    w[1].1, w[0].1
                ));
            }
        }
        Ok(Turnaround::with_slices(points))
    }

    /// Uniform in [0, max).
    pub fn uniform(max: SimDuration) -> Turnaround {
        Turnaround::with_slices(vec![(0.0, 0), (1.0, max.as_nanos())])
    }

    /// `points` checked by the caller: at least two, from probability 0 to 1.
    fn with_slices(points: Vec<(f64, u64)>) -> Turnaround {
        let count = |f: &dyn Fn(f64) -> bool| points.partition_point(|&(p, _)| f(p)) as u32;
        let mut slices = [(0, 0); SLICES];
        for (s, slice) in slices.iter_mut().enumerate() {
            let (start, end) = (s as f64 / SLICES as f64, (s + 1) as f64 / SLICES as f64);
            // a draw u in [start, end): at least the points <= start lie at or below it (at
            // least the first, at probability 0), at most the points < end
            let (at_start, below_end) = (count(&|p| p <= start), count(&|p| p < end));
            *slice = (at_start - 1, below_end - at_start);
        }
        let segments = points
            .windows(2)
            .map(|w| Segment {
                p0: w[0].0,
                p1: w[1].0,
                width: w[1].0 - w[0].0,
                d0: w[0].1,
                span: (w[1].1 - w[0].1) as f64,
            })
            .collect();
        Turnaround {
            points,
            segments,
            slices,
        }
    }

    pub fn points(&self) -> &[(f64, u64)] {
        &self.points
    }

    /// Whether every draw is zero (nothing to draw: runs stay as without noise).
    pub fn is_zero(&self) -> bool {
        self.points.iter().all(|&(_, d)| d == 0)
    }

    /// One draw: u uniform in [0, 1) (the stream's `next_f64`), mapped through the inverse
    /// CDF.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> SimDuration {
        let x = rng.next_u64();
        // u = next_f64's draw: (x >> 11) / 2^53, so u * SLICES = (x >> 11) / 2^47 exactly and
        // its integer part is x >> 58
        SimDuration::from_nanos(self.at_in(Rng::unit_f64(x), (x >> SLICE_SHIFT) as usize))
    }

    /// The delay (ns) at u in [0, 1) through the inverse CDF.
    #[cfg(test)]
    fn at(&self, u: f64) -> u64 {
        self.at_in(u, (u * SLICES as f64) as usize)
    }

    /// The delay (ns) at u in [0, 1) through the inverse CDF, `slice` the integer part of
    /// u * SLICES.
    #[inline(always)]
    fn at_in(&self, u: f64, slice: usize) -> u64 {
        // the segment of the last point at or below u (u < 1, so not the last point)
        let (first, inside) = self.slices[slice & (SLICES - 1)];
        let mut k = first as usize;
        let last = k + inside as usize;
        while k < last && self.segments[k].p1 <= u {
            k += 1;
        }
        let s = &self.segments[k];
        let f = (u - s.p0) / s.width;
        s.d0.saturating_add((s.span * f) as u64)
    }

    /// The mean of the distribution (trapezoids between the points), ns.
    pub fn mean_ns(&self) -> f64 {
        self.points
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) as f64 / 2.0)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_quantiles() {
        let n = Turnaround::new(vec![
            (0.0, 10_000),
            (0.5, 20_000),
            (0.9, 30_000),
            (1.0, 100_000),
        ])
        .unwrap();
        let mut rng = Rng::new(3);
        let mut xs: Vec<u64> = (0..100_000)
            .map(|_| n.sample(&mut rng).as_nanos())
            .collect();
        xs.sort_unstable();
        let q = |p: f64| xs[(p * (xs.len() - 1) as f64) as usize] as f64;
        assert!((q(0.5) - 20_000.0).abs() < 300.0, "{}", q(0.5));
        assert!((q(0.9) - 30_000.0).abs() < 500.0, "{}", q(0.9));
        assert!(xs[0] >= 10_000 && *xs.last().unwrap() < 100_000);
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        assert!(
            (mean - n.mean_ns()).abs() / n.mean_ns() < 0.01,
            "{mean} vs {}",
            n.mean_ns()
        );
    }

    #[test]
    fn a_draw_is_the_binary_search_draw() {
        // the slices' lookup picks the points a binary search over all of them picks (the
        // draw before the lookup), for every u: the same delay bit for bit, so the
        // simulator's results do not move
        let search = |t: &Turnaround, u: f64| {
            let i = t
                .points
                .partition_point(|&(p, _)| p <= u)
                .clamp(1, t.points.len() - 1);
            let ((p0, d0), (p1, d1)) = (t.points[i - 1], t.points[i]);
            d0.saturating_add(((d1 - d0) as f64 * ((u - p0) / (p1 - p0))) as u64)
        };
        let tables = [
            Turnaround::new(KERNEL_SENDER_QUANTILES_NS.to_vec()).unwrap(),
            Turnaround::new(KERNEL_RECEIVER_QUANTILES_NS.to_vec()).unwrap(),
            Turnaround::uniform(SimDuration::from_nanos(40_000)),
            // points on slice edges, several in one slice, a flat step, one just below 1
            Turnaround::new(vec![
                (0.0, 0),
                (1.0 / 64.0, 10),
                (0.5, 20),
                (0.5001, 20),
                (0.5002, 30),
                (0.75, 40),
                (1.0 - 1e-12, 50),
                (1.0, 60),
            ])
            .unwrap(),
        ];
        let below = |x: f64| f64::from_bits(x.to_bits() - 1);
        let above = |x: f64| f64::from_bits(x.to_bits() + 1);
        let mut rng = Rng::new(11);
        for t in &tables {
            // every point and slice edge, and the doubles either side of it
            let mut us = vec![0.0, below(1.0)];
            let edges = (1..SLICES).map(|s| s as f64 / SLICES as f64);
            for x in t.points.iter().map(|&(p, _)| p).chain(edges) {
                us.extend([x, above(x)]);
                if x > 0.0 {
                    us.push(below(x));
                }
            }
            for u in us.into_iter().filter(|u| (0.0..1.0).contains(u)) {
                assert_eq!(t.at(u), search(t, u), "u = {u:e}");
            }
            for _ in 0..200_000 {
                let u = rng.next_f64();
                assert_eq!(t.at(u), search(t, u), "u = {u:e}");
            }
        }
        // and a sample is the delay at the stream's next draw (its slice read off the draw's
        // top bits: the integer part of next_f64 * SLICES, for every draw)
        for t in &tables {
            let (mut a, mut b) = (Rng::new(5), Rng::new(5));
            for _ in 0..200_000 {
                assert_eq!(t.sample(&mut a).as_nanos(), t.at(b.next_f64()));
            }
        }
        let mut xs = vec![0, 1, u64::MAX, u64::MAX >> 1, (1 << 11) - 1, 1 << 11];
        for s in 0..SLICES as u64 {
            let edge = s << SLICE_SHIFT;
            xs.extend([
                edge,
                edge.wrapping_sub(1),
                edge | ((1 << 11) - 1),
                edge + (1 << 11),
            ]);
        }
        xs.extend((0..100_000).map(|_| rng.next_u64()));
        for x in xs {
            let u = Rng::unit_f64(x);
            assert_eq!(
                (x >> SLICE_SHIFT) as usize,
                (u * SLICES as f64) as usize,
                "x = {x:#x}"
            );
        }
    }

    #[test]
    fn malformed_tables_are_refused_with_the_reason() {
        assert!(Turnaround::new(vec![(0.0, 1)]).unwrap_err().contains("two"));
        assert!(Turnaround::new(vec![(0.1, 1), (1.0, 2)])
            .unwrap_err()
            .contains("probability 0"));
        assert!(Turnaround::new(vec![(0.0, 5), (0.5, 4), (1.0, 6)])
            .unwrap_err()
            .contains("non-decreasing"));
        assert!(
            Turnaround::new(vec![(0.0, 1), (0.5, 2), (0.5, 3), (1.0, 4)])
                .unwrap_err()
                .contains("increasing")
        );
    }

    #[test]
    fn the_kernel_presets_are_well_formed() {
        let k = HostNoise::kernel();
        assert_eq!(k.sender.points().first().unwrap().0, 0.0);
        assert_eq!(k.receiver.points().last().unwrap().0, 1.0);
    }

    #[test]
    fn acks_draw_from_the_sender_and_data_from_the_receiver() {
        let n = HostNoise {
            sender: Turnaround::uniform(SimDuration::from_micros(1)),
            receiver: Turnaround::new(vec![(0.0, 500_000), (1.0, 500_000)]).unwrap(),
        };
        let mut rng = Rng::new(1);
        assert!(n.sample(false, &mut rng) < SimDuration::from_micros(1));
        assert_eq!(n.sample(true, &mut rng), SimDuration::from_micros(500));
    }
}
