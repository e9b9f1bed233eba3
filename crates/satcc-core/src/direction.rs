//! One direction of a link: the single implementation the simulator's event loop
//! (`satcc-sim` net.rs) and the real-time emulator (`satcc-emu` direction.rs) both drive, so
//! sim-vs-kernel differences come from TCP, not from two channel models.
//!
//! ```text
//!  offer(t) ──► [queue: drop tail or front, CE marking ≥ K] ──► serialiser (model rate) ──► loss? ──► wire (delay + jitter, FIFO) ──► arrive
//! ```
//! Everything is a function of the instants handed in (no clock, no I/O). The serialiser asks
//! the link behaviour when a packet that starts now has left (`LinkBehaviour::transmit_end`,
//! which honours rate changes mid-packet; a rate of 0 holds the packet in service until the
//! link returns), then takes the state in force as the packet leaves: a scripted drop, the
//! Bernoulli `loss` or the model's `extra_drop` lose it, otherwise it propagates for the
//! state's delay plus a uniform draw from [0, jitter) plus whatever the caller adds (the
//! simulator's host turnaround), clamped behind the packet before it (the wire is FIFO).
//!
//! | parameter          | default  | unit    | source                                    |
//! |--------------------|----------|---------|-------------------------------------------|
//! | rate, delay, loss  | model    | bit/s, ns, probability | `LinkModel::state_at`      |
//! | queue limit        | scenario | packets or bytes | `QueueSpec` (BDP sized before)    |
//! | drop               | tail     | tail or front | `QueueDrop`: a full queue drops the arrival, or the oldest queued (Linux's `pfifo_head_drop`) |
//! | ecn_threshold_pkts | none     | packets | step marking, RFC 8257 §3.1 (DCTCP's K)    |
//! | jitter             | 0        | ns      | uniform extra delay per packet; 0 draws nothing |
//! | drop_packets       | none     | ordinals | scripted losses (1-based, counting every packet serialised), a test aid like ns-3's ReceiveListErrorModel |
//! | tick               | none     | ns      | dummynet-like service: packets leave only on a kernel tick (below) |
//!
//! **Tick service** (`tick` set; constant links only): the serialiser is a dummynet pipe served
//! by a periodic kernel tick of period T (FreeBSD's `kern.hz`, 1000 by default). A pipe earns
//! `rate · T` of credit per tick while it has packets and releases, at each tick, every queued
//! packet the credit covers, so the link's output comes in bursts at the tick instants. Written
//! as virtual serialisation: a packet's virtual transmission starts where the one before it
//! ended (a backlog keeps its credit) or, from idle, at the tick before it arrived (dummynet
//! starts an idle pipe with no credit and serves it at the next tick); it leaves at the first
//! tick at or after its virtual end. An idle pipe keeps its leftover credit only within the
//! tick in which it went idle (dummynet's `idle_time` check). Delay, loss and jitter apply to
//! each packet as it leaves, as for exact service (satcc's delay is the link's own propagation,
//! not dummynet's tick-served delay line).
//!
//! Random draws come from one stream per direction, in this order per packet leaving the
//! serialiser: the loss draw (none when loss is 0), then the jitter draw (none when jitter is
//! 0 or the packet was lost). Scripted drops and `extra_drop` draw nothing from it.

use crate::dirspec::{self, QueueDrop, QueueSpec};
use crate::link::{ConstantLink, LinkModel, LinkState};
use crate::models::{LinkBehaviour, MeanState};
use crate::record::LinkSeriesRow;
use crate::ring::Ring;
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};

/// The random stream of the direction with the simulator's index `dir_index` (2·link + 1 for
/// b→a): its loss and jitter draws, the same in the simulator and in satcc-linkd.
pub fn stream(seed: u64, dir_index: u64) -> Rng {
    Rng::derive(seed, STREAM_LABEL_BASE + dir_index)
}

const STREAM_LABEL_BASE: u64 = 0x114b_0000;

/// What a link direction needs to know of a packet.
pub trait LinkPacket {
    /// The bytes the link charges: the IP packet.
    fn size_bytes(&self) -> u64;
    /// Mark Congestion Experienced if the packet is ECN-capable; whether it was marked.
    fn mark_ce(&mut self) -> bool;
}

/// The virtual clock of a tick-served direction (see the module header): the credit run's
/// origin and the bytes served since, so virtual ends are exact (no per-packet rounding).
///
/// The virtual time served since the origin, `bytes · 8 · 10⁹ / rate` ns rounded up, is kept
/// as its quotient and remainder at the rate in force (`served`), advanced per packet by the
/// share of a packet of its size (`share`, remembered for the last size and rate), so a packet
/// costs no 128-bit division; the ticks `now` and the virtual end fell in last are remembered
/// (`now_tick`, `end_tick`, multiples of the direction's one period), so a packet in the same
/// ticks costs no division either. Every value is the one the formulas give (the test
/// `the_tick_clock_keeps_the_formulas_values`).
#[derive(Clone, Copy, Debug, Default)]
struct TickClock {
    origin: SimTime,
    bytes: u128,
    /// `bytes · 8 · 10⁹` as (quotient, remainder) by `served_rate` (0: not yet computed).
    served: (u128, u64),
    served_rate: u64,
    /// (bytes, rate, quotient, remainder): `bytes · 8 · 10⁹` by `rate` for the last size
    /// and rate (rate 0: none).
    share: (u64, u64, u128, u64),
    /// The tick (a multiple of the period) the last `now` and virtual end fell in.
    now_tick: SimTime,
    end_tick: SimTime,
    /// Virtual end of the last packet's transmission.
    v_finish: SimTime,
    /// The tick at which the last packet left.
    last_release: SimTime,
}

/// Nanoseconds of a byte at 1 bit/s: a byte's share of the virtual clock is this over the rate.
const TICK_NS_PER_BYTE_BPS: u128 = 8 * 1_000_000_000;

impl TickClock {
    /// Restart the credit run at `origin` with nothing served.
    #[inline(always)]
    fn restart(&mut self, origin: SimTime) {
        self.origin = origin;
        self.bytes = 0;
        self.served = (0, 0);
    }

    /// Serve `bytes` more at `rate` (> 0): the virtual time served since the origin, ns,
    /// `⌈bytes_total · 8 · 10⁹ / rate⌉` (`tick_release`'s formula).
    #[inline(always)]
    fn serve(&mut self, bytes: u64, rate: u64) -> u128 {
        self.bytes += u128::from(bytes);
        let r = u128::from(rate);
        if rate != self.served_rate {
            // a rate of its own (the first packet, or a wrapper's rate changed): the whole
            // run's bytes divided once
            let num = self.bytes * TICK_NS_PER_BYTE_BPS;
            self.served = (num / r, (num % r) as u64);
            self.served_rate = rate;
        } else {
            if (self.share.0, self.share.1) != (bytes, rate) {
                let num = u128::from(bytes) * TICK_NS_PER_BYTE_BPS;
                self.share = (bytes, rate, num / r, (num % r) as u64);
            }
            // remainders below the rate: their sum is below twice the rate, and past the
            // rate (or past u64) it exceeds the rate by less than the rate
            let q = self.served.0 + self.share.2;
            let (rem, over) = self.served.1.overflowing_add(self.share.3);
            self.served = if over || rem >= rate {
                (q + 1, rem.wrapping_sub(rate))
            } else {
                (q, rem)
            };
        }
        self.served.0 + u128::from(self.served.1 != 0)
    }
}

/// `tick_floor(t, period)` through `cache`, the tick of an earlier `t` (a multiple of
/// `period`): no division while `t` stays in that tick.
#[inline(always)]
fn tick_floor_cached(t: SimTime, period: SimDuration, cache: &mut SimTime) -> SimTime {
    let (n, s) = (t.as_nanos(), cache.as_nanos());
    if n >= s && n - s < period.as_nanos() {
        return *cache;
    }
    *cache = tick_floor(t, period);
    *cache
}

/// `tick_ceil(t, period)` given `floor`, `tick_floor(t, period)`.
#[inline(always)]
fn tick_ceil_of(t: SimTime, floor: SimTime, period: SimDuration) -> SimTime {
    if t == floor {
        return floor;
    }
    match floor.as_nanos().checked_add(period.as_nanos()) {
        Some(c) => SimTime::from_nanos(c),
        None => tick_ceil(t, period),
    }
}

/// Counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets offered to the queue.
    pub offered: u64,
    /// Packets that finished propagating (taken off the wire).
    pub delivered: u64,
    pub drops_queue: u64,
    pub drops_random: u64,
    pub ecn_marks: u64,
    /// Bytes serialised.
    pub tx_bytes: u64,
}

impl Counters {
    /// A bin's row of the link series (both engines write it): the queue at the bin's end, these
    /// counters (the bin's), and the model's mean state over the bin.
    pub fn bin_row(
        &self,
        link_id: u32,
        dir: &'static str,
        t_s: f64,
        (queue_pkts, queue_bytes): (u64, u64),
        mean: &MeanState,
    ) -> LinkSeriesRow {
        LinkSeriesRow {
            link_id,
            dir,
            t_s,
            queue_pkts,
            queue_bytes,
            drops_queue: self.drops_queue,
            drops_random: self.drops_random,
            ecn_marks: self.ecn_marks,
            tx_bytes: self.tx_bytes,
            capacity_bps: mean.rate_bps.round() as u64,
            delay_ms: mean.delay.as_nanos() as f64 / 1e6,
        }
    }

    pub fn add(&mut self, o: &Counters) {
        self.offered += o.offered;
        self.delivered += o.delivered;
        self.drops_queue += o.drops_queue;
        self.drops_random += o.drops_random;
        self.ecn_marks += o.ecn_marks;
        self.tx_bytes += o.tx_bytes;
    }
}

/// What `offer` did with a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Offered {
    /// The serialiser was idle: transmission starts now and ends at the given instant
    /// (`None`: the link never carries it; the packet is held in service).
    Started(Option<SimTime>),
    /// Queued (under `QueueDrop::Front`, perhaps in place of older packets, handed to `lost`).
    Queued,
    /// The queue was full and dropped the arrival (handed to `lost`).
    Dropped,
}

/// The transmission times of the last two packet sizes a constant link serialised (most
/// traffic is full data segments one way and ACKs the other), so a packet of a size seen
/// just before costs no division: `SimDuration::transmission` is a pure function of the size
/// and the rate.
#[derive(Clone, Copy, Debug, Default)]
struct TransmissionMemo {
    /// (bytes, rate in bit/s, transmission time), most recent first; an entry of rate 0 is
    /// empty (no caller asks at rate 0: such a link never ends a transmission).
    entries: [(u64, u64, SimDuration); 2],
}

impl TransmissionMemo {
    /// The transmission time of `bytes` on a plain link if it is remembered (what
    /// [`transmission`](Self::transmission) returns then, without a miss to handle). Every
    /// entry of a plain link's memo is at its one rate, so the size alone is compared (an
    /// empty entry's size is 0, and so is the transmission time it holds).
    #[inline(always)]
    fn lookup_size(&self, bytes: u64, rate_bps: u64) -> Option<SimDuration> {
        for &(b, r, d) in &self.entries {
            if b == bytes {
                debug_assert!(
                    r == rate_bps || (b, r) == (0, 0),
                    "a plain link at one rate"
                );
                return Some(d);
            }
        }
        None
    }

    fn transmission(&mut self, bytes: u64, rate_bps: u64) -> SimDuration {
        debug_assert!(rate_bps > 0, "a transmission at rate 0");
        for &(b, r, d) in &self.entries {
            if b == bytes && r == rate_bps {
                return d;
            }
        }
        self.miss(bytes, rate_bps)
    }

    /// A size or rate not among the entries: computed (a division, 128-bit for a huge packet)
    /// and remembered. Out of line, so the callers' hot paths (`Direction::offer`,
    /// `Direction::complete`) hold fewer registers.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, bytes: u64, rate_bps: u64) -> SimDuration {
        let d = SimDuration::transmission(bytes, rate_bps);
        self.entries = [(bytes, rate_bps, d), self.entries[0]];
        d
    }
}

/// One direction of a link.
pub struct Direction<P> {
    model: Box<dyn LinkBehaviour>,
    /// `model` when it is a constant link (most links of most scenarios), called directly.
    constant: Option<ConstantLink>,
    /// Recent transmission times of the constant link.
    memo: TransmissionMemo,
    /// A constant link with no jitter and no scripted drops: the state in force never
    /// changes, and a packet leaving the serialiser takes the short way (`complete_plain`).
    plain: Option<LinkState>,
    /// `plain` with random loss (`loss > 0`: what `Rng::chance` takes for a loss, NaN
    /// excluded), read once at the build rather than tested for every packet.
    plain_lossy: bool,
    /// `plain` with tick service: its packets start through `start_general` (the tick
    /// clock), and the usual offer and completion (`offer_usual`, `complete_usual`, which
    /// start the next packet from the transmission memo) leave it to `offer` and `complete`.
    plain_ticked: bool,
    /// The resolved direction (its queue sized: packets or bytes), read for its queue, drop,
    /// ECN threshold, jitter, scripted drops and tick service; its rate, delay, loss and model
    /// come from `model`.
    cfg: dirspec::Direction,
    /// The state in force when the last packet left the serialiser.
    state: LinkState,
    queue: Ring<P>,
    queue_bytes: u64,
    /// The packet being serialised and when it is done (`None`: never).
    in_service: Option<(P, Option<SimTime>)>,
    /// `service_done` as a time, `SimTime::MAX` for `None` (no packet in service, or one
    /// that is never done): set with `in_service` (`set_in_service`, `take_in_service`), so
    /// the simulator's catch-up tests it with one comparison (`service_end`).
    service_end: SimTime,
    /// Packets propagating, with their arrival instants (FIFO, non-decreasing).
    wire: Ring<(SimTime, P)>,
    /// The arrival instant of the packet put on the wire last (the wire's back while it holds
    /// one): the FIFO clamp reads it here rather than through the ring.
    wire_last: SimTime,
    rng: Rng,
    counters: Counters,
    /// Packets serialised so far, and the scripted drops still to come (descending).
    serialised: u64,
    drop_list: Vec<u64>,
    tick_clock: TickClock,
}

/// The first multiple of `period` at or after `t`.
fn tick_ceil(t: SimTime, period: SimDuration) -> SimTime {
    let p = period.as_nanos();
    let n = t.as_nanos();
    SimTime::from_nanos(n.div_ceil(p) * p)
}

/// The last multiple of `period` at or before `t`.
fn tick_floor(t: SimTime, period: SimDuration) -> SimTime {
    let p = period.as_nanos();
    let n = t.as_nanos();
    SimTime::from_nanos(n / p * p)
}

impl<P: LinkPacket> Direction<P> {
    /// `cfg`: the resolved direction with its queue sized ([`QueueSpec::sized`]), as
    /// `scenario::Resolved::direction` gives it; `model`: its behaviour; `nominal`: the state
    /// reported before any packet has left (the model's nominal values).
    pub fn new(
        model: Box<dyn LinkBehaviour>,
        cfg: dirspec::Direction,
        nominal: LinkState,
        rng: Rng,
    ) -> Self {
        debug_assert!(
            !matches!(cfg.queue, QueueSpec::Bdp(_)),
            "an x-BDP queue is sized before a link is built"
        );
        let mut drop_list = cfg.drop_packets().to_vec();
        drop_list.sort_unstable_by(|a, b| b.cmp(a));
        let constant = model.as_constant();
        let plain = constant
            .as_ref()
            .filter(|_| cfg.jitter().is_zero() && drop_list.is_empty())
            .map(|c| c.0);
        Direction {
            constant,
            plain,
            plain_lossy: plain.is_some_and(|s| s.loss > 0.0),
            plain_ticked: plain.is_some() && cfg.tick().is_some(),
            memo: TransmissionMemo::default(),
            model,
            cfg,
            state: nominal,
            queue: Ring::new(),
            queue_bytes: 0,
            in_service: None,
            service_end: SimTime::MAX,
            wire: Ring::new(),
            wire_last: SimTime::ZERO,
            rng,
            counters: Counters::default(),
            serialised: 0,
            drop_list,
            tick_clock: TickClock::default(),
        }
    }

    /// Offer a packet at `now`. The caller must have finished every transmission due by `now`.
    /// A packet the full queue drops goes to `lost`: the arrival (`QueueDrop::Tail`), or the
    /// oldest queued ones until the arrival fits (`QueueDrop::Front`).
    pub fn offer(&mut self, mut pkt: P, now: SimTime, mut lost: impl FnMut(P)) -> Offered {
        self.counters.offered += 1;
        if self.in_service.is_none() && self.queue.is_empty() {
            return Offered::Started(self.start(pkt, now, false));
        }
        let mut pkts = self.queue.len() as u64;
        let size = pkt.size_bytes();
        if !self.cfg.queue.admits(pkts, self.queue_bytes, size) {
            if self.cfg.drop.get() == QueueDrop::Tail || !self.cfg.queue.admits(0, 0, size) {
                self.counters.drops_queue += 1;
                lost(pkt);
                return Offered::Dropped;
            }
            pkts = self.drop_front(size, &mut lost);
        }
        if let Some(k) = self.cfg.ecn_threshold_pkts() {
            // Step marking on the instantaneous queue (DCTCP's K, RFC 8257 §3.1).
            if pkts >= k && pkt.mark_ce() {
                self.counters.ecn_marks += 1;
            }
        }
        self.queue_bytes += size;
        self.queue.push_back(pkt);
        Offered::Queued
    }

    /// [`offer`](Self::offer)'s usual cases, without a call anywhere on the way (so the caller
    /// needs no saved registers for them): an idle plain link starting a packet of a
    /// remembered transmission time, or a queue that admits the packet with a free slot in
    /// its ring. Anything else (a drop, a growing ring, a link that is not plain, a size not
    /// remembered) hands the packet back untouched, with the direction as it was, for `offer`.
    #[inline(always)]
    pub fn offer_usual(&mut self, mut pkt: P, now: SimTime) -> Result<Offered, P> {
        if self.in_service.is_none() && self.queue.is_empty() {
            // `start` on a plain link of exact service, its transmission time remembered
            let Some(state) = self.plain.filter(|_| !self.plain_ticked) else {
                return Err(pkt);
            };
            let done = if state.rate_bps > 0 {
                match self.memo.lookup_size(pkt.size_bytes(), state.rate_bps) {
                    Some(d) => Some(now + d),
                    None => return Err(pkt),
                }
            } else {
                None
            };
            self.counters.offered += 1;
            self.set_in_service(pkt, done);
            return Ok(Offered::Started(done));
        }
        let pkts = self.queue.len() as u64;
        let size = pkt.size_bytes();
        if !self.cfg.queue.admits(pkts, self.queue_bytes, size) || !self.queue.has_room() {
            return Err(pkt);
        }
        self.counters.offered += 1;
        if let Some(k) = self.cfg.ecn_threshold_pkts() {
            if pkts >= k && pkt.mark_ce() {
                self.counters.ecn_marks += 1;
            }
        }
        self.queue_bytes += size;
        if self.queue.try_push_back(pkt).is_err() {
            unreachable!("the queue's ring had room");
        }
        Ok(Offered::Queued)
    }

    /// Drop from the head of the queue (never the packet in service) until a packet of `size`
    /// bytes fits behind the rest, as Linux's `pfifo_head_drop` (one packet per arrival for a
    /// packet limit); the packets left queued. The caller knows it fits an empty queue.
    #[cold]
    #[inline(never)]
    fn drop_front(&mut self, size: u64, lost: &mut impl FnMut(P)) -> u64 {
        while !self
            .cfg
            .queue
            .admits(self.queue.len() as u64, self.queue_bytes, size)
        {
            let head = self.queue.pop_front().expect("a full queue has a head");
            self.queue_bytes -= head.size_bytes();
            self.counters.drops_queue += 1;
            lost(head);
        }
        self.queue.len() as u64
    }

    /// Put `pkt` in service at `now` (`backlogged`: the packet before it left just now); the
    /// end of its transmission (`None`: never).
    // A plain link's start inlined into its callers (`offer`, `complete`); the rest out of
    // line, so the plain path saves and restores no registers for a call.
    #[inline(always)]
    fn start(&mut self, pkt: P, now: SimTime, backlogged: bool) -> Option<SimTime> {
        if let Some(state) = self.plain.filter(|_| !self.plain_ticked) {
            let bytes = pkt.size_bytes();
            let done =
                (state.rate_bps > 0).then(|| now + self.memo.transmission(bytes, state.rate_bps));
            self.set_in_service(pkt, done);
            return done;
        }
        self.start_general(pkt, now, backlogged)
    }

    /// [`start`](Self::start) on a link that is not plain, or plain with tick service.
    #[inline(never)]
    fn start_general(&mut self, pkt: P, now: SimTime, backlogged: bool) -> Option<SimTime> {
        let bytes = pkt.size_bytes();
        if let Some(period) = self.cfg.tick() {
            let done = self.tick_release(now, bytes, backlogged, period);
            self.set_in_service(pkt, done);
            return done;
        }
        let done = match &self.constant {
            // ConstantLink::transmit_end, through the memo
            Some(c) => {
                (c.0.rate_bps > 0).then(|| now + self.memo.transmission(bytes, c.0.rate_bps))
            }
            None => self.model.transmit_end(now, bytes),
        };
        self.set_in_service(pkt, done);
        done
    }

    /// When a packet of `bytes` put in service at `now` leaves a tick-served pipe (the module
    /// header's rules).
    #[cold]
    fn tick_release(
        &mut self,
        now: SimTime,
        bytes: u64,
        backlogged: bool,
        period: SimDuration,
    ) -> Option<SimTime> {
        // A constant link (the resolver allows no other), possibly behind a wrapper such as
        // satcc-linkd's origin shift: its rate in force now.
        let rate = match &self.constant {
            Some(c) => c.0.rate_bps,
            None => self.model.state_at(now).rate_bps,
        };
        if rate == 0 {
            return None;
        }
        let clock = &mut self.tick_clock;
        let tick = tick_floor_cached(now, period, &mut clock.now_tick);
        // dummynet keeps the credit of a backlog, and of a pipe idle since this tick only
        if !(backlogged || clock.last_release >= tick) {
            clock.restart(tick);
        }
        // ⌈bytes · 8 · 10⁹ / rate⌉ over the run's bytes (`TickClock::serve`)
        let ns = clock.serve(bytes, rate);
        clock.v_finish =
            clock.origin + SimDuration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX));
        // served by the tick handler: never before the next tick (io_fast off)
        let end_floor = tick_floor_cached(clock.v_finish, period, &mut clock.end_tick);
        let release =
            tick_ceil_of(clock.v_finish, end_floor, period).max(tick_ceil_of(now, tick, period));
        clock.last_release = release;
        Some(release)
    }

    /// A packet held in service by a link that never carried it: ask again from `at` when it
    /// is done (the emulator, once the run's time origin is known).
    pub fn retime_held(&mut self, at: SimTime) {
        if let Some((pkt, done @ None)) = &mut self.in_service {
            *done = self.model.transmit_end(at, pkt.size_bytes());
            self.service_end = done.unwrap_or(SimTime::MAX);
        }
    }

    /// Put `pkt` in service, done at `done` (`None`: never).
    #[inline(always)]
    fn set_in_service(&mut self, pkt: P, done: Option<SimTime>) {
        self.in_service = Some((pkt, done));
        self.service_end = done.unwrap_or(SimTime::MAX);
    }

    /// Take the packet in service, if any.
    #[inline(always)]
    fn take_in_service(&mut self) -> Option<(P, Option<SimTime>)> {
        self.service_end = SimTime::MAX;
        self.in_service.take()
    }

    /// [`service_done`](Self::service_done) as a time, `SimTime::MAX` for `None`: a packet
    /// done before `t` is in service exactly when this is below `t`.
    #[inline(always)]
    pub fn service_end(&self) -> SimTime {
        debug_assert_eq!(
            self.service_end,
            self.service_done().unwrap_or(SimTime::MAX)
        );
        self.service_end
    }

    /// When the packet in service is done, if one is and the link ever carries it.
    pub fn service_done(&self) -> Option<SimTime> {
        self.in_service.as_ref().and_then(|(_, d)| *d)
    }

    /// The serialiser finished at `now`: the packet goes onto the wire (or is lost) and the
    /// next queued packet starts. `extra` adds delay to a surviving packet before the FIFO
    /// clamp (the simulator's host turnaround; it may also stamp the packet, as the simulator
    /// stamps its arrival event's sequence number). Returns (arrival instant if the packet
    /// survived, end of the next transmission if one started and ever ends).
    pub fn finish(
        &mut self,
        now: SimTime,
        extra: impl FnOnce(&mut P) -> SimDuration,
    ) -> (Option<SimTime>, Option<SimTime>) {
        let arrival = self.complete(now, extra, drop);
        (arrival, self.service_done())
    }

    /// [`finish`](Self::finish) handing a packet lost on the wire to `lost` (the simulator
    /// recycles the storage of the packet a handle points at) and returning only the arrival
    /// instant if the packet survived (the simulator's event loop reads the end of the next
    /// transmission from [`service_done`](Self::service_done) when it needs it).
    #[inline]
    pub fn complete(
        &mut self,
        now: SimTime,
        extra: impl FnOnce(&mut P) -> SimDuration,
        lost: impl FnOnce(P),
    ) -> Option<SimTime> {
        let (mut pkt, _) = self
            .take_in_service()
            .expect("finish without a packet in service");
        if let Some(state) = self.plain {
            return self.complete_plain(state, pkt, now, extra, lost);
        }
        let bytes = pkt.size_bytes();
        self.counters.tx_bytes += bytes;
        self.serialised += 1;
        let scripted = self.drop_list.last() == Some(&self.serialised);
        if scripted {
            self.drop_list.pop();
        }
        self.state = match &mut self.constant {
            Some(c) => c.state_at(now),
            None => self.model.state_at(now),
        };
        let dropped = scripted
            || self.rng.chance(self.state.loss)
            || match &mut self.constant {
                Some(c) => c.extra_drop(now, bytes),
                None => self.model.extra_drop(now, bytes),
            };
        let arrival = if dropped {
            self.counters.drops_random += 1;
            lost(pkt);
            None
        } else {
            let mut at = now + self.state.delay;
            let jitter = self.cfg.jitter();
            if !jitter.is_zero() {
                at += SimDuration::from_nanos(
                    (self.rng.next_f64() * jitter.as_nanos() as f64) as u64,
                );
            }
            at += extra(&mut pkt);
            Some(self.onto_wire(at, pkt))
        };
        self.serve_next(now);
        arrival
    }

    /// Put `pkt` on the wire to arrive at `at`, or behind the packet ahead of it: FIFO, a
    /// shrinking delay or a draw never reorders. Returns the arrival instant.
    #[inline(always)]
    fn onto_wire(&mut self, at: SimTime, pkt: P) -> SimTime {
        let at = self.wire_arrival(at);
        self.wire.push_back((at, pkt));
        at
    }

    /// The arrival instant of a packet put on the wire to arrive at `at`: no earlier than the
    /// packet ahead of it (FIFO), remembered as the wire's last.
    #[inline(always)]
    fn wire_arrival(&mut self, mut at: SimTime) -> SimTime {
        if !self.wire.is_empty() {
            debug_assert_eq!(
                self.wire.back().map(|&(last, _)| last),
                Some(self.wire_last)
            );
            at = at.max(self.wire_last);
        }
        self.wire_last = at;
        at
    }

    /// The serialiser is free at `now`: start the queue's head, if any.
    #[inline(always)]
    fn serve_next(&mut self, now: SimTime) {
        if let Some(p) = self.queue.pop_front() {
            self.queue_bytes -= p.size_bytes();
            self.start(p, now, true);
        }
    }

    /// [`complete`](Self::complete) on a plain link (`plain`: a constant `state`, exact or
    /// tick service, no jitter, no scripted drop): the loss draw, the caller's extra delay,
    /// the wire and the next start, without the cases that cannot arise (a scripted drop, the
    /// model's state and extra drop, jitter); the wire and the next start are `complete`'s
    /// own (`onto_wire`, `serve_next`, whose `start` takes a tick-served link's clock).
    #[inline(always)]
    fn complete_plain(
        &mut self,
        state: LinkState,
        mut pkt: P,
        now: SimTime,
        extra: impl FnOnce(&mut P) -> SimDuration,
        lost: impl FnOnce(P),
    ) -> Option<SimTime> {
        let bytes = pkt.size_bytes();
        self.counters.tx_bytes += bytes;
        self.serialised += 1;
        let arrival = if self.rng.chance(state.loss) {
            self.counters.drops_random += 1;
            lost(pkt);
            None
        } else {
            let at = now + state.delay + extra(&mut pkt);
            Some(self.onto_wire(at, pkt))
        };
        self.serve_next(now);
        arrival
    }

    /// [`complete`](Self::complete)'s usual case, without a call anywhere on the way (so the
    /// caller needs no saved registers for it): a plain link without random loss (no draw:
    /// `Rng::chance` of 0 draws nothing) whose wire has room in its ring and whose next queued
    /// packet, if any, has a remembered transmission time; the packet's arrival instant.
    /// `None`, the direction untouched, for anything else: the caller then calls `complete`.
    #[inline(always)]
    pub fn complete_usual(
        &mut self,
        now: SimTime,
        extra: impl FnOnce(&mut P) -> SimDuration,
    ) -> Option<SimTime> {
        let state = self.plain?;
        if self.plain_lossy
            || self.plain_ticked
            || self.in_service.is_none()
            || !self.wire.has_room()
        {
            return None;
        }
        // `serve_next`'s start, its transmission time looked up before anything changes
        let next_done = match self.queue.front() {
            Some(p) if state.rate_bps > 0 => {
                Some(now + self.memo.lookup_size(p.size_bytes(), state.rate_bps)?)
            }
            _ => None,
        };
        let (mut pkt, _) = self.take_in_service()?;
        // `complete_plain` (its loss draw takes nothing), then `serve_next`
        self.counters.tx_bytes += pkt.size_bytes();
        self.serialised += 1;
        // `onto_wire`, into the room checked above
        let at = self.wire_arrival(now + state.delay + extra(&mut pkt));
        if self.wire.try_push_back((at, pkt)).is_err() {
            unreachable!("the wire's ring had room");
        }
        if let Some(p) = self.queue.pop_front() {
            self.queue_bytes -= p.size_bytes();
            self.set_in_service(p, next_done);
        }
        Some(at)
    }

    /// Finish every transmission due by `t` (a real-time driver's catch-up).
    pub fn serve_until(&mut self, t: SimTime) {
        while let Some(done) = self.service_done() {
            if done > t {
                return;
            }
            self.finish(done, |_| SimDuration::ZERO);
        }
    }

    /// Take the packet at the head of the wire (its arrival instant has come).
    pub fn arrive(&mut self) -> P {
        self.counters.delivered += 1;
        self.wire
            .pop_front()
            .expect("arrival without a packet on the wire")
            .1
    }

    /// When the packet at the head of the wire arrives, if any.
    pub fn next_arrival(&self) -> Option<SimTime> {
        self.wire.front().map(|(at, _)| *at)
    }

    /// The packet `i` places behind the head of the wire and its arrival instant.
    #[inline]
    pub fn on_wire(&self, i: usize) -> Option<(SimTime, &P)> {
        self.wire.get(i).map(|(at, p)| (*at, p))
    }

    pub fn model_mut(&mut self) -> &mut dyn LinkBehaviour {
        self.model.as_mut()
    }

    /// The state in force when the last packet left the serialiser.
    pub fn last_state(&self) -> LinkState {
        match self.plain {
            // (a plain link does not write `state` per packet: it is the constant's)
            Some(state) if self.serialised > 0 => state,
            _ => self.state,
        }
    }

    /// Queue occupancy (waiting, not in service): packets and bytes.
    pub fn queue_len(&self) -> (u64, u64) {
        (self.queue.len() as u64, self.queue_bytes)
    }

    /// Packets held: queued, in service, on the wire.
    pub fn held(&self) -> usize {
        self.queue.len() + self.wire.len() + usize::from(self.in_service.is_some())
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The counters so far; they start again from zero.
    pub fn take_counters(&mut self) -> Counters {
        std::mem::take(&mut self.counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::ConstantLink;
    use crate::scenario::file::Pkts;
    use crate::scenario::switches::Key;

    #[derive(Debug, PartialEq)]
    struct Pkt {
        size: u64,
        ect: bool,
        ce: bool,
    }

    impl LinkPacket for Pkt {
        fn size_bytes(&self) -> u64 {
            self.size
        }
        fn mark_ce(&mut self) -> bool {
            self.ce |= self.ect;
            self.ect
        }
    }

    fn ms(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(n)
    }

    fn pkt(size: u64) -> Pkt {
        Pkt {
            size,
            ect: true,
            ce: false,
        }
    }

    fn dir(rate_bps: u64, delay_ms: u64, cfg: dirspec::Direction) -> Direction<Pkt> {
        let state = LinkState {
            rate_bps,
            delay: SimDuration::from_millis(delay_ms),
            loss: 0.0,
        };
        Direction::new(Box::new(ConstantLink(state)), cfg, state, Rng::new(1))
    }

    /// A direction with queue `limit` and every other key at its default (its rate, delay
    /// and loss are the model's, `dir`'s).
    fn cfg(limit: QueueSpec) -> dirspec::Direction {
        dirspec::Direction::new(0, 0, 0.0, limit)
    }

    #[test]
    fn back_to_back_packets_leave_one_serialisation_time_apart() {
        // 1500 B at 12 Mbit/s = 1 ms each.
        let mut d = dir(12_000_000, 10, cfg(QueueSpec::Packets(10)));
        assert_eq!(
            d.offer(pkt(1500), SimTime::ZERO, drop),
            Offered::Started(Some(ms(1)))
        );
        assert_eq!(d.offer(pkt(1500), SimTime::ZERO, drop), Offered::Queued);
        let (a, next) = d.finish(ms(1), |_| SimDuration::ZERO);
        assert_eq!((a, next), (Some(ms(11)), Some(ms(2))));
        let (a, next) = d.finish(ms(2), |_| SimDuration::ZERO);
        assert_eq!((a, next), (Some(ms(12)), None));
    }

    #[test]
    fn the_transmission_memo_answers_as_the_formula_for_sizes_and_rates_in_any_order() {
        let mut memo = TransmissionMemo::default();
        let sizes = [1500, 52, 1500, 64, 52, 1500, 1, 9000, 52, 52, 1500];
        for rate in [3, 12_000_000, 100_000_000, 1_000_000_000, 7_777_777_777] {
            for &b in sizes.iter().chain(sizes.iter().rev()) {
                assert_eq!(
                    memo.transmission(b, rate),
                    SimDuration::transmission(b, rate),
                    "{b} B at {rate} bit/s"
                );
            }
        }
    }

    #[test]
    fn a_constant_link_serialises_each_packet_for_its_own_size() {
        // 1500 B at 12 Mbit/s = 1 ms, 60 B = 40 µs, alternating through the memo.
        let mut d = dir(12_000_000, 0, cfg(QueueSpec::Packets(10)));
        let mut t = SimTime::ZERO;
        for size in [1500, 60, 1500, 60, 60, 1500] {
            let Offered::Started(Some(done)) = d.offer(pkt(size), t, drop) else {
                panic!("an idle link starts the packet")
            };
            assert_eq!(done - t, SimDuration::transmission(size, 12_000_000));
            d.finish(done, |_| SimDuration::ZERO);
            t = done;
        }
    }

    #[test]
    fn a_full_queue_hands_the_packet_back() {
        let mut d = dir(12_000_000, 0, cfg(QueueSpec::Packets(1)));
        d.offer(pkt(1500), SimTime::ZERO, drop);
        assert_eq!(d.offer(pkt(1500), SimTime::ZERO, drop), Offered::Queued);
        let mut lost = vec![];
        assert_eq!(
            d.offer(pkt(700), SimTime::ZERO, |p| lost.push(p)),
            Offered::Dropped
        );
        assert_eq!(lost, vec![pkt(700)]);
        assert_eq!(d.counters().drops_queue, 1);
    }

    /// A queue of `limit` that drops from the front.
    fn front(limit: QueueSpec) -> Direction<Pkt> {
        let mut c = cfg(limit);
        c.drop = Key::new(QueueDrop::Front);
        dir(12_000_000, 0, c)
    }

    #[test]
    fn a_full_drop_front_queue_drops_its_oldest_packet_and_queues_the_arrival() {
        // pfifo_head_drop: one in service, two queued (limit 2); each arrival beyond drops
        // the head of the queue, never the packet in service.
        let mut d = front(QueueSpec::Packets(2));
        let mut lost = vec![];
        for size in [100, 200, 300, 400, 500] {
            d.offer(pkt(size), SimTime::ZERO, |p: Pkt| lost.push(p.size));
        }
        assert_eq!(lost, vec![200, 300]);
        assert_eq!(d.counters().drops_queue, 2);
        assert_eq!(d.queue_len(), (2, 900));
        let sent: Vec<u64> = (0..3)
            .map(|_| {
                let done = d.service_done().unwrap();
                d.finish(done, |_| SimDuration::ZERO);
                d.arrive().size
            })
            .collect();
        assert_eq!(sent, vec![100, 400, 500]);
    }

    #[test]
    fn a_byte_limited_drop_front_queue_drops_from_the_head_until_the_arrival_fits() {
        // 3000 B queued as 1000 + 1000 + 1000; a 1500 B arrival needs two heads gone. A packet
        // larger than the whole limit is dropped itself, the queue untouched.
        let mut d = front(QueueSpec::Bytes(3000));
        let mut lost = vec![];
        let mut offer = |d: &mut Direction<Pkt>, size| {
            d.offer(pkt(size), SimTime::ZERO, |p: Pkt| lost.push(p.size))
        };
        for _ in 0..4 {
            offer(&mut d, 1000);
        }
        assert_eq!(offer(&mut d, 1500), Offered::Queued);
        assert_eq!(d.queue_len(), (2, 2500));
        assert_eq!(offer(&mut d, 3001), Offered::Dropped);
        assert_eq!(d.queue_len(), (2, 2500));
        assert_eq!(lost, vec![1000, 1000, 3001]);
        assert_eq!(d.counters().drops_queue, 3);
    }

    #[test]
    fn packets_queued_behind_k_others_are_marked() {
        let mut c = cfg(QueueSpec::Packets(10));
        c.ecn_threshold = Key::new(Some(Pkts(1)));
        let mut d = dir(12_000_000, 0, c);
        for _ in 0..3 {
            d.offer(pkt(1500), SimTime::ZERO, drop);
        }
        // in service, queued behind 0 (not marked), queued behind 1 (marked)
        assert_eq!(d.counters().ecn_marks, 1);
    }

    #[test]
    fn scripted_drops_lose_exactly_those_packets() {
        let mut c = cfg(QueueSpec::Packets(10));
        c.drop_packets = Some(vec![3, 1]);
        let mut d = dir(12_000_000, 0, c);
        for _ in 0..3 {
            d.offer(pkt(1500), SimTime::ZERO, drop);
        }
        let survived: Vec<bool> = (1..=3)
            .map(|k| d.finish(ms(k), |_| SimDuration::ZERO).0.is_some())
            .collect();
        assert_eq!(survived, vec![false, true, false]);
    }

    fn us(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(n)
    }

    fn tick_dir(rate_bps: u64) -> Direction<Pkt> {
        let mut c = cfg(QueueSpec::Packets(100));
        c.tick_ns = Some(1_000_000);
        dir(rate_bps, 0, c)
    }

    /// Serve `d` until idle; the instants its packets left.
    fn releases(d: &mut Direction<Pkt>) -> Vec<SimTime> {
        let mut out = vec![];
        while let Some(done) = d.service_done() {
            out.push(done);
            d.finish(done, |_| SimDuration::ZERO);
        }
        out
    }

    #[test]
    fn a_tick_served_backlog_leaves_in_bursts_of_one_ticks_credit() {
        // 1500 B at 36 Mbit/s = 333.3 µs: three packets' credit per 1 ms tick. Offered at
        // 0.2 ms, the backlog's credit counts from the tick before (0 ms).
        let mut d = tick_dir(36_000_000);
        for _ in 0..7 {
            d.offer(pkt(1500), us(200), drop);
        }
        assert_eq!(
            releases(&mut d),
            vec![ms(1), ms(1), ms(1), ms(2), ms(2), ms(2), ms(3)]
        );
    }

    #[test]
    fn a_tick_served_pipe_holds_even_a_small_packet_until_the_next_tick() {
        let mut d = tick_dir(1_000_000_000);
        assert_eq!(
            d.offer(pkt(60), us(4_100), drop),
            Offered::Started(Some(ms(5)))
        );
    }

    #[test]
    fn a_tick_served_pipe_keeps_its_credit_only_within_the_tick_it_went_idle() {
        // 1500 B at 6 Mbit/s = 2 ms: one packet per two ticks.
        let mut d = tick_dir(6_000_000);
        d.offer(pkt(1500), us(100), drop); // credit from 0: leaves at 2 ms
        assert_eq!(releases(&mut d), vec![ms(2)]);
        // Idle since the 2 ms tick; a packet at 2.5 ms continues from the virtual end (2 ms).
        d.offer(pkt(1500), us(2_500), drop);
        assert_eq!(releases(&mut d), vec![ms(4)]);
        // Idle for more than a tick: credit starts again at the tick before the arrival.
        d.offer(pkt(1500), us(9_300), drop);
        assert_eq!(releases(&mut d), vec![ms(11)]);
    }

    #[test]
    fn a_tick_served_pipe_carries_the_rate_over_a_long_backlog() {
        // 1 Gbit/s, 1 ms ticks: 1000 full packets take 12 ms of credit; the last one leaves
        // at the tick after its virtual end, and the bursts hold 83 or 84 packets.
        let mut c = cfg(QueueSpec::Packets(2000));
        c.tick_ns = Some(1_000_000);
        let mut d = dir(1_000_000_000, 0, c);
        for _ in 0..1000 {
            d.offer(pkt(1500), SimTime::ZERO, drop);
        }
        let out = releases(&mut d);
        assert_eq!(out.len(), 1000);
        assert_eq!(*out.last().unwrap(), ms(12));
        let first_tick = out.iter().filter(|&&t| t == ms(1)).count();
        assert_eq!(
            first_tick, 83,
            "125,000 B of credit carry 83 packets of 1500 B"
        );
    }

    #[test]
    fn the_tick_clock_keeps_the_formulas_values() {
        // `tick_release` against its formulas written out (every division done afresh, the
        // bytes summed as u128): random sizes, gaps (within a tick, across ticks, long idle),
        // backlogs, rates that change (a wrapper's) and periods, tick-aligned instants
        // among them; the releases must be the same instants.
        struct Formula {
            origin: SimTime,
            bytes: u128,
            last_release: SimTime,
        }
        let mut rng = Rng::new(43);
        for case in 0..40u64 {
            let period = SimDuration::from_nanos(
                [1_000_000, 100_000, 999_983, 10_000_000][case as usize % 4],
            );
            let mut c = cfg(QueueSpec::Packets(100));
            c.tick_ns = Some(period.as_nanos());
            let mut rate =
                [1_000_000_000, 36_000_000, 273_000_001, 10_000][(case / 4) as usize % 4];
            let mut d = dir(rate, 0, c);
            let mut f = Formula {
                origin: SimTime::ZERO,
                bytes: 0,
                last_release: SimTime::ZERO,
            };
            let mut now = SimTime::ZERO;
            for _ in 0..3000 {
                let gap = match rng.next_u64() % 8 {
                    0 => 0,
                    1 => period.as_nanos() - now.as_nanos() % period.as_nanos(), // onto a tick
                    2 => period.as_nanos() * (1 + rng.next_u64() % 5),
                    3 => rng.next_u64() % (50 * period.as_nanos()),
                    _ => rng.next_u64() % (period.as_nanos() / 7 + 1),
                };
                now += SimDuration::from_nanos(gap);
                if rng.next_u64().is_multiple_of(50) {
                    // now and then a rate near u64's end (remainders that overflow when added)
                    rate = if rng.next_u64().is_multiple_of(4) {
                        u64::MAX - rng.next_u64() % 1000
                    } else {
                        1 + rng.next_u64() % 2_000_000_000
                    };
                    d.constant = Some(ConstantLink(LinkState {
                        rate_bps: rate,
                        delay: SimDuration::ZERO,
                        loss: 0.0,
                    }));
                }
                // (and sizes of gigabytes, whose shares' remainders near such a rate overflow
                // u64 when added)
                let bytes = [1500, 1500, 1500, 66, 66, 9000, 1, 65_535, 3_000_000_007]
                    [(rng.next_u64() % 9) as usize];
                let backlogged = !rng.next_u64().is_multiple_of(3);
                let tick = tick_floor(now, period);
                if !(backlogged || f.last_release >= tick) {
                    f.origin = tick;
                    f.bytes = 0;
                }
                f.bytes += u128::from(bytes);
                let ns = (f.bytes * 8 * 1_000_000_000).div_ceil(u128::from(rate));
                let v_finish =
                    f.origin + SimDuration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX));
                let want = tick_ceil(v_finish, period).max(tick_ceil(now, period));
                f.last_release = want;
                let got = d.tick_release(now, bytes, backlogged, period);
                assert_eq!(
                    got,
                    Some(want),
                    "case {case}, {bytes} B at {now:?}, rate {rate}"
                );
                assert_eq!(d.tick_clock.v_finish, v_finish);
            }
        }
    }

    #[test]
    fn extra_delay_is_clamped_behind_the_packet_before() {
        let mut d = dir(1_200_000_000, 1, cfg(QueueSpec::Packets(10)));
        d.offer(pkt(1500), SimTime::ZERO, drop);
        d.offer(pkt(1500), SimTime::ZERO, drop);
        let done = d.service_done().unwrap();
        let (a1, next) = d.finish(done, |_| SimDuration::from_micros(100));
        let (a2, _) = d.finish(next.unwrap(), |_| SimDuration::ZERO);
        assert_eq!(
            a1, a2,
            "the second packet may not overtake the delayed first"
        );
    }

    /// The same constant link seen only through the model trait (`as_constant` is `None`),
    /// so its direction takes the general path of `complete` and `start`.
    struct Opaque(ConstantLink);

    impl crate::link::LinkModel for Opaque {
        fn state_at(&mut self, now: SimTime) -> LinkState {
            self.0.state_at(now)
        }
        fn next_change(&self, now: SimTime) -> Option<SimTime> {
            self.0.next_change(now)
        }
    }

    impl LinkBehaviour for Opaque {}

    #[test]
    fn a_plain_constant_link_serves_as_the_general_path_does() {
        // loss draws, the caller's extra delay with its FIFO clamp, queue drops, mixed sizes;
        // exact and tick service (a tick-served plain link completes the short way too)
        for (tick_ns, loss) in [(None, 0.2), (Some(1_000_000), 0.2), (Some(300_000), 0.0)] {
            let state = LinkState {
                rate_bps: 10_000_000,
                delay: SimDuration::from_millis(7),
                loss,
            };
            let mk = |model: Box<dyn LinkBehaviour>| {
                let mut c = cfg(QueueSpec::Packets(8));
                c.tick_ns = tick_ns;
                Direction::new(model, c, state, Rng::new(3))
            };
            let mut fast = mk(Box::new(ConstantLink(state)));
            let mut general = mk(Box::new(Opaque(ConstantLink(state))));
            assert!(fast.plain.is_some() && general.plain.is_none());
            assert_eq!(fast.plain_ticked, tick_ns.is_some());
            let trace = |d: &mut Direction<Pkt>| {
                let mut log = Vec::new();
                let mut now = SimTime::ZERO;
                for i in 0..400u64 {
                    let offered = d.offer(pkt(if i % 3 == 0 { 60 } else { 1500 }), now, drop);
                    log.push(format!("{offered:?}"));
                    while let Some(done) = d.service_done().filter(|&t| t <= now) {
                        let (at, next) = d.finish(done, |p| {
                            SimDuration::from_micros(if p.size > 100 { 900 } else { 0 })
                        });
                        log.push(format!("{at:?} {next:?} {:?}", d.last_state()));
                    }
                    now += SimDuration::from_micros(400 + (i % 7) * 150);
                }
                (log, d.counters())
            };
            assert_eq!(trace(&mut fast), trace(&mut general), "tick {tick_ns:?}");
        }
    }

    #[test]
    fn the_usual_offer_and_completion_leave_the_direction_as_offer_and_complete_do() {
        // `offer_usual` and `complete_usual` (with `offer` and `complete` for what they hand
        // back) against `offer` and `complete` alone: three sizes through the two-entry memo,
        // a queue that fills and drops, ECN marks, rings growing from empty; with and without
        // random loss (the usual completion takes none), on a plain link and one that is not,
        // and on a plain link with tick service (whose completions the usual path leaves).
        for (loss, plain, tick_ns) in [
            (0.0, true, None),
            (0.1, true, None),
            (0.0, false, None),
            (0.0, true, Some(1_000_000)),
        ] {
            let state = LinkState {
                rate_bps: 10_000_000,
                delay: SimDuration::from_millis(7),
                loss,
            };
            let mk = || {
                let mut c = cfg(QueueSpec::Packets(12));
                c.ecn_threshold = Key::new(Some(Pkts(5)));
                c.tick_ns = tick_ns;
                let model: Box<dyn LinkBehaviour> = if plain {
                    Box::new(ConstantLink(state))
                } else {
                    Box::new(Opaque(ConstantLink(state)))
                };
                Direction::new(model, c, state, Rng::new(9))
            };
            let trace = |usual: bool| {
                let mut d = mk();
                let (mut log, mut lost) = (Vec::new(), Vec::new());
                let (mut now, mut usual_offers, mut usual_ends) = (SimTime::ZERO, 0, 0);
                for i in 0..600u64 {
                    let size = [1500, 60, 1500, 576][(i % 4) as usize] + i % 2;
                    let p = pkt(size);
                    let offered = match usual.then(|| d.offer_usual(p, now)) {
                        Some(Ok(o)) => {
                            usual_offers += 1;
                            o
                        }
                        Some(Err(p)) => d.offer(p, now, |p| lost.push(p.size)),
                        None => d.offer(pkt(size), now, |p| lost.push(p.size)),
                    };
                    log.push(format!("{offered:?}"));
                    while let Some(done) = d.service_done().filter(|&t| t <= now) {
                        let extra = |p: &mut Pkt| {
                            SimDuration::from_micros(if p.size > 100 { 900 } else { 0 })
                        };
                        let at = match usual.then(|| d.complete_usual(done, extra)).flatten() {
                            Some(at) => {
                                usual_ends += 1;
                                Some(at)
                            }
                            None => d.complete(done, extra, |p| lost.push(p.size)),
                        };
                        log.push(format!(
                            "{at:?} {:?} {:?}",
                            d.service_done(),
                            d.last_state()
                        ));
                    }
                    while d.next_arrival().is_some_and(|t| t <= now) {
                        log.push(format!("arrived {:?}", d.arrive()));
                    }
                    now += SimDuration::from_micros(300 + (i % 7) * 150);
                }
                ((log, lost, d.counters()), (usual_offers, usual_ends))
            };
            let (with_usual, (offers, ends)) = trace(true);
            assert_eq!(
                with_usual,
                trace(false).0,
                "loss {loss}, plain {plain}, tick {tick_ns:?}"
            );
            // the usual paths were taken (and handed some cases back)
            if plain {
                // (a tick-served link's idle starts go to `offer`)
                let least = if tick_ns.is_some() { 100 } else { 300 };
                assert!(offers > least && offers < 600, "{offers} usual offers");
            }
            if plain && loss == 0.0 && tick_ns.is_none() {
                assert!(ends > 100, "{ends} usual ends");
            } else {
                assert_eq!(ends, 0);
            }
        }
    }
}
