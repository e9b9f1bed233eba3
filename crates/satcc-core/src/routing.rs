//! Routes and "N BDP" queue sizes, computed once for every engine: the simulator builds its
//! network from them, and the emulator's topology and the model engine read them through the
//! bindings (`satcc._native.resolve_routes`), so the three never disagree on a path.
//!
//! Routes are shortest paths by propagation delay; ties go to fewer hops, then to the lower
//! link-direction index of the first hop (Dijkstra from every source on the key (delay, hops,
//! first direction)). Direction `2i` is link i's a→b, `2i + 1` its b→a.
//!
//! An "N BDP" queue holds N × rate × the largest base RTT of the flows whose forward or reverse
//! path crosses the direction, at least [`MIN_BDP_QUEUE_BYTES`].

use crate::time::SimDuration;

/// A "N BDP" queue never holds less than one full-size packet.
pub const MIN_BDP_QUEUE_BYTES: u64 = 1500;

/// What routing needs of a link: its ends and each direction's propagation delay.
#[derive(Clone, Copy, Debug)]
pub struct LinkEnds {
    pub a: usize,
    pub b: usize,
    pub ab_delay: SimDuration,
    pub ba_delay: SimDuration,
}

/// All-pairs routes over `n` nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    n: usize,
    /// `next[node * n + dst]`: the first link direction from node towards dst.
    next: Vec<Option<u32>>,
    /// `base_delay[a * n + b]`: one-way propagation delay along the route.
    base_delay: Vec<SimDuration>,
    /// The node each direction leads to.
    to_node: Vec<usize>,
}

impl Routing {
    pub fn compute(n: usize, links: &[LinkEnds]) -> Routing {
        let mut adj: Vec<Vec<(u32, usize, SimDuration)>> = vec![Vec::new(); n];
        let mut to_node = Vec::with_capacity(2 * links.len());
        for (i, l) in links.iter().enumerate() {
            adj[l.a].push(((2 * i) as u32, l.b, l.ab_delay));
            adj[l.b].push(((2 * i + 1) as u32, l.a, l.ba_delay));
            to_node.extend([l.b, l.a]);
        }
        let mut next = vec![None; n * n];
        let mut base_delay = vec![SimDuration::ZERO; n * n];
        for src in 0..n {
            // (delay, hops, first direction)
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
                let (du, hu, first) = best[u].expect("a settled node has a key");
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
                    base_delay[src * n + dst] = d;
                }
            }
        }
        Routing {
            n,
            next,
            base_delay,
            to_node,
        }
    }

    /// The link direction to take from `node` towards `dst` (None: unreachable or there).
    #[inline]
    pub fn next_hop(&self, node: usize, dst: usize) -> Option<u32> {
        self.next[node * self.n + dst]
    }

    pub fn connected(&self, a: usize, b: usize) -> bool {
        a == b || self.next_hop(a, b).is_some()
    }

    /// One-way propagation delay along the route from `a` to `b`.
    pub fn base_delay(&self, a: usize, b: usize) -> SimDuration {
        self.base_delay[a * self.n + b]
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
