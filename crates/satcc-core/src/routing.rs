//! Routes and "N BDP" queue sizes, computed once for every engine: the simulator builds its
//! network from them, and the emulator's topology and the model engine read them through the
//! bindings (`satcc._native.resolve_routes`), so the three never disagree on a path.
//!
//! Routes are shortest paths by propagation delay; ties go to fewer hops, then to the lower
//! link-direction index of the first hop. Direction `2i` is link i's a→b, `2i + 1` its b→a.
//!
//! How: one Dijkstra per destination `d` on the reversed graph (a binary heap on the key
//! (delay, hops)) gives every node's shortest (delay, hops) to `d`; a node's first hop towards
//! `d` is then the direction `(dir: u → v, w)` with the least (w + delay(v), 1 + hops(v), dir).
//! That is the route a Dijkstra from every source on the key (delay, hops, first direction)
//! finds (what this module did before, in O(n³)): every prefix of a (delay, hops)-shortest
//! path is shortest, so the least first direction over all shortest paths is the least over
//! the first hops that start one. Cost: O(m log n) per destination, and only the nodes flows
//! end at need to be destinations ([`Routing::compute_for`]).
//!
//! An "N BDP" queue holds N × rate × the largest base RTT of the flows whose forward or reverse
//! path crosses the direction, at least [`MIN_BDP_QUEUE_BYTES`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::SimDuration;

/// A "N BDP" queue never holds less than one full-size packet.
pub const MIN_BDP_QUEUE_BYTES: u64 = 1500;

/// No destination slot (`Routing::slot`).
const NO_SLOT: u32 = u32::MAX;

/// What routing needs of a link: its ends and each direction's propagation delay.
#[derive(Clone, Copy, Debug)]
pub struct LinkEnds {
    pub a: usize,
    pub b: usize,
    pub ab_delay: SimDuration,
    pub ba_delay: SimDuration,
}

/// Routes from every node to a set of destinations (every node: [`Routing::compute`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    n: usize,
    /// `slot[dst]`: the row of `next`/`base_delay` for routes towards dst, or NO_SLOT.
    slot: Vec<u32>,
    /// `next[slot * n + node]`: the first link direction from node towards the slot's dst.
    next: Vec<Option<u32>>,
    /// `base_delay[slot * n + node]`: one-way propagation delay from node to the slot's dst.
    base_delay: Vec<SimDuration>,
    /// The node each direction leads to.
    to_node: Vec<usize>,
}

impl Routing {
    /// Routes between every pair of nodes (n destinations: O(n · m log n) time, n² memory).
    pub fn compute(n: usize, links: &[LinkEnds]) -> Routing {
        let all: Vec<usize> = (0..n).collect();
        Routing::compute_for(n, links, &all)
    }

    /// Routes from every node to each node of `dsts` (other destinations have no route):
    /// what a simulation needs is the flows' end nodes.
    pub fn compute_for(n: usize, links: &[LinkEnds], dsts: &[usize]) -> Routing {
        // out[u]: (direction, to, delay); into[v]: (from, delay, hops-free reverse edges)
        let mut out: Vec<Vec<(u32, usize, SimDuration)>> = vec![Vec::new(); n];
        let mut into: Vec<Vec<(usize, SimDuration)>> = vec![Vec::new(); n];
        let mut to_node = Vec::with_capacity(2 * links.len());
        for (i, l) in links.iter().enumerate() {
            out[l.a].push(((2 * i) as u32, l.b, l.ab_delay));
            out[l.b].push(((2 * i + 1) as u32, l.a, l.ba_delay));
            into[l.b].push((l.a, l.ab_delay));
            into[l.a].push((l.b, l.ba_delay));
            to_node.extend([l.b, l.a]);
        }
        let mut slot = vec![NO_SLOT; n];
        let mut order = Vec::new();
        for &d in dsts {
            if d < n && slot[d] == NO_SLOT {
                slot[d] = order.len() as u32;
                order.push(d);
            }
        }
        let mut next = vec![None; order.len() * n];
        let mut base_delay = vec![SimDuration::ZERO; order.len() * n];
        // (delay, hops) to the destination, per node
        let mut best: Vec<Option<(SimDuration, u32)>> = vec![None; n];
        let mut heap = BinaryHeap::new();
        for (k, &dst) in order.iter().enumerate() {
            best.fill(None);
            best[dst] = Some((SimDuration::ZERO, 0));
            heap.push(Reverse((SimDuration::ZERO, 0u32, dst)));
            while let Some(Reverse((dv, hv, v))) = heap.pop() {
                if best[v] != Some((dv, hv)) {
                    continue; // a stale entry
                }
                for &(u, w) in &into[v] {
                    let cand = (dv + w, hv + 1);
                    if best[u].is_none_or(|b| cand < b) {
                        best[u] = Some(cand);
                        heap.push(Reverse((cand.0, cand.1, u)));
                    }
                }
            }
            let row = k * n;
            for u in 0..n {
                let Some((du, _)) = best[u] else { continue };
                base_delay[row + u] = du;
                if u == dst {
                    continue;
                }
                next[row + u] = out[u]
                    .iter()
                    .filter_map(|&(dir, v, w)| best[v].map(|(dv, hv)| (dv + w, hv + 1, dir)))
                    .min()
                    .map(|(_, _, dir)| dir);
            }
        }
        Routing {
            n,
            slot,
            next,
            base_delay,
            to_node,
        }
    }

    fn row(&self, dst: usize) -> Option<usize> {
        let s = *self.slot.get(dst)?;
        (s != NO_SLOT).then(|| s as usize * self.n)
    }

    /// The link direction to take from `node` towards `dst` (None: unreachable or there).
    #[inline]
    pub fn next_hop(&self, node: usize, dst: usize) -> Option<u32> {
        self.next[self.row(dst)? + node]
    }

    pub fn connected(&self, a: usize, b: usize) -> bool {
        a == b || self.next_hop(a, b).is_some()
    }

    /// One-way propagation delay along the route from `a` to `b` (zero: unreachable, or `b`
    /// not among the destinations computed).
    pub fn base_delay(&self, a: usize, b: usize) -> SimDuration {
        self.row(b)
            .map_or(SimDuration::ZERO, |r| self.base_delay[r + a])
    }

    /// Link directions along the route from `a` to `b` (empty if unreachable).
    pub fn path(&self, a: usize, b: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut node = a;
        while node != b {
            let Some(d) = self.next_hop(node, b) else {
                break;
            };
            out.push(d);
            node = self.to_node[d as usize];
        }
        out
    }

    /// Per direction: the largest base RTT of the flows `(src, dst)` whose forward or reverse
    /// path crosses it (zero where none does).
    pub fn max_rtt_per_direction(&self, flows: &[(usize, usize)]) -> Vec<SimDuration> {
        let mut max_rtt = vec![SimDuration::ZERO; self.to_node.len()];
        for &(s, d) in flows {
            let rtt = self.base_delay(s, d) + self.base_delay(d, s);
            for (a, b) in [(s, d), (d, s)] {
                for k in self.path(a, b) {
                    max_rtt[k as usize] = max_rtt[k as usize].max(rtt);
                }
            }
        }
        max_rtt
    }
}

/// The byte limit of an "x BDP" queue at `rate_bps` for a base RTT of `max_rtt`.
pub fn bdp_queue_bytes(rate_bps: u64, max_rtt: SimDuration, x: f64) -> u64 {
    let bytes = rate_bps as f64 / 8.0 * max_rtt.as_secs_f64() * x;
    (bytes.round() as u64).max(MIN_BDP_QUEUE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn link(a: usize, b: usize, delay_ms: u64) -> LinkEnds {
        LinkEnds {
            a,
            b,
            ab_delay: ms(delay_ms),
            ba_delay: ms(delay_ms),
        }
    }

    #[test]
    fn the_shorter_delay_wins_over_fewer_hops() {
        // 0 -(50)- 2 directly, or 0 -(10)- 1 -(10)- 2
        let r = Routing::compute(3, &[link(0, 2, 50), link(0, 1, 10), link(1, 2, 10)]);
        assert_eq!(r.path(0, 2), vec![2, 4]);
        assert_eq!(r.base_delay(0, 2), ms(20));
        assert_eq!(r.path(2, 0), vec![5, 3]);
    }

    #[test]
    fn equal_delays_go_to_fewer_hops_then_to_the_lower_direction_index() {
        // two equal parallel links: the first one is taken both ways
        let r = Routing::compute(2, &[link(0, 1, 10), link(0, 1, 10)]);
        assert_eq!(r.path(0, 1), vec![0]);
        assert_eq!(r.path(1, 0), vec![1]);
        // 0 -(10)- 1 -(10)- 2 against a direct 20 ms link added later: fewer hops wins
        let r = Routing::compute(3, &[link(0, 1, 10), link(1, 2, 10), link(0, 2, 20)]);
        assert_eq!(r.path(0, 2), vec![4]);
    }

    /// The O(n³) all-pairs search this module used before (a Dijkstra from every source on
    /// the key (delay, hops, first direction), linear scans): the reference the per-destination
    /// search must match route for route, so that no simulation moves.
    fn reference(n: usize, links: &[LinkEnds]) -> (Vec<Option<u32>>, Vec<SimDuration>) {
        let mut adj: Vec<Vec<(u32, usize, SimDuration)>> = vec![Vec::new(); n];
        for (i, l) in links.iter().enumerate() {
            adj[l.a].push(((2 * i) as u32, l.b, l.ab_delay));
            adj[l.b].push(((2 * i + 1) as u32, l.a, l.ba_delay));
        }
        let mut next = vec![None; n * n];
        let mut delay = vec![SimDuration::ZERO; n * n];
        for src in 0..n {
            let mut best: Vec<Option<(SimDuration, u32, u32)>> = vec![None; n];
            let mut done = vec![false; n];
            best[src] = Some((SimDuration::ZERO, 0, u32::MAX));
            for _ in 0..n {
                let Some(u) = (0..n)
                    .filter(|&v| !done[v] && best[v].is_some())
                    .min_by_key(|&v| best[v])
                else {
                    break;
                };
                done[u] = true;
                let (du, hu, first) = best[u].unwrap();
                for &(dir, v, d) in &adj[u] {
                    let cand = (du + d, hu + 1, if u == src { dir } else { first });
                    if best[v].is_none_or(|b| cand < b) {
                        best[v] = Some(cand);
                    }
                }
            }
            for (dst, b) in best.iter().enumerate() {
                if let Some((d, _, first)) = *b {
                    if dst != src {
                        next[src * n + dst] = Some(first);
                    }
                    delay[src * n + dst] = d;
                }
            }
        }
        (next, delay)
    }

    #[test]
    fn per_destination_routes_are_the_all_pairs_search_routes_on_random_graphs() {
        let mut rng = crate::Rng::new(31);
        for case in 0..300 {
            let n = 2 + (rng.next_u64() % 14) as usize;
            let m = (rng.next_u64() % (3 * n as u64)) as usize;
            // few distinct delays (0-3 ms, some asymmetric) and parallel links: many ties
            let links: Vec<LinkEnds> = (0..m)
                .map(|_| {
                    let a = (rng.next_u64() % n as u64) as usize;
                    let b = (rng.next_u64() % n as u64) as usize;
                    let d = ms(rng.next_u64() % 4);
                    let e = if rng.chance(0.3) {
                        ms(rng.next_u64() % 4)
                    } else {
                        d
                    };
                    LinkEnds {
                        a,
                        b,
                        ab_delay: d,
                        ba_delay: e,
                    }
                })
                .collect();
            let r = Routing::compute(n, &links);
            let (next, delay) = reference(n, &links);
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(r.next_hop(a, b), next[a * n + b], "case {case}: {a}->{b}");
                    assert_eq!(
                        r.base_delay(a, b),
                        delay[a * n + b],
                        "case {case}: {a}->{b}"
                    );
                }
            }
            // only some destinations: the same routes towards them, none towards the others
            let dsts = [0, n - 1];
            let part = Routing::compute_for(n, &links, &dsts);
            for a in 0..n {
                for b in 0..n {
                    let want = if dsts.contains(&b) {
                        next[a * n + b]
                    } else {
                        None
                    };
                    assert_eq!(part.next_hop(a, b), want, "case {case}: {a}->{b}");
                }
            }
        }
    }

    #[test]
    fn a_chain_of_20000_links_routes_two_end_nodes_quickly() {
        let links: Vec<LinkEnds> = (0..20_000).map(|i| link(i, i + 1, 1)).collect();
        let t = std::time::Instant::now();
        let r = Routing::compute_for(20_001, &links, &[0, 20_000]);
        assert_eq!(r.base_delay(0, 20_000), ms(20_000));
        assert_eq!(r.path(0, 20_000).len(), 20_000);
        // linear: well under a second even in a debug build (the O(n³) search took hours)
        assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
    }

    #[test]
    fn unreachable_nodes_have_no_route() {
        let r = Routing::compute(3, &[link(0, 1, 10)]);
        assert!(!r.connected(0, 2));
        assert!(r.path(0, 2).is_empty());
        assert!(r.connected(1, 1));
    }

    #[test]
    fn bdp_queues_use_the_longest_rtt_crossing_them() {
        // sender 0 and 1 share router 2 -> receiver 3; RTTs 2 x (5 + 20) and 2 x (50 + 20) ms
        let r = Routing::compute(4, &[link(0, 2, 5), link(1, 2, 50), link(2, 3, 20)]);
        let rtt = r.max_rtt_per_direction(&[(0, 3), (1, 3)]);
        assert_eq!(rtt[4], ms(140)); // bottleneck a->b
        assert_eq!(rtt[5], ms(140)); // and its reverse (the ACKs)
        assert_eq!(rtt[0], ms(50));
        // 100 Mbit/s x 140 ms = 1.75 MB; never below one packet
        assert_eq!(bdp_queue_bytes(100_000_000, rtt[4], 1.0), 1_750_000);
        assert_eq!(bdp_queue_bytes(1_000, ms(1), 1.0), MIN_BDP_QUEUE_BYTES);
    }
}
