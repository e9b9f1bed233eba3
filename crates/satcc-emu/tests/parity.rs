//! The simulator and satcc-linkd run one link direction (`satcc_core::direction`); what differs
//! is how they drive it: the simulator's event loop calls `finish` exactly at each end of
//! transmission, satcc-linkd polls on a real clock, from an origin, at whatever instants its
//! loop wakes. This drives both ways with the same frames over a time-varying link with
//! loss, jitter, a queue that overflows (dropping its tail, then its front) and an outage, and
//! requires the same deliveries to the nanosecond.

use satcc_core::direction::{Direction as CoreDirection, Offered};
use satcc_core::dirspec::{self, QueueDrop, QueueSpec};
use satcc_core::link::{LinkModel, LinkState};
use satcc_core::models::LinkBehaviour;
use satcc_core::scenario::file::Nanos;
use satcc_core::scenario::switches::Key;
use satcc_core::{Rng, SimDuration, SimTime};
use satcc_emu::direction::{Direction, Frame, ETH_HEADER};

const MS: u64 = 1_000_000;

/// 20 Mbit/s and 10 ms, then 5 Mbit/s and 30 ms from 40 ms, an outage from 70 to 75 ms, then
/// 50 Mbit/s and 2 ms; 2 % loss throughout.
#[derive(Clone)]
struct Steps;

impl LinkModel for Steps {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        let ms = now.as_nanos() / MS;
        let (rate_bps, delay_ms) = match ms {
            0..40 => (20_000_000, 10),
            40..70 => (5_000_000, 30),
            70..75 => (0, 30),
            _ => (50_000_000, 2),
        };
        LinkState {
            rate_bps,
            delay: SimDuration::from_millis(delay_ms),
            loss: 0.02,
        }
    }
    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        [40, 70, 75]
            .into_iter()
            .map(|m| SimTime::from_nanos(m * MS))
            .find(|&c| c > now)
    }
}
impl LinkBehaviour for Steps {}

/// A 20-packet queue dropping by `drop`, 300 us of jitter (rate, delay and loss: `Steps`).
fn config(drop: QueueDrop) -> dirspec::Direction {
    let mut d = dirspec::Direction::new(0, 0, 0.0, QueueSpec::Packets(20));
    d.drop = Key::new(drop);
    d.jitter = Key::new(Nanos(300_000));
    d
}

fn frame(ip_len: usize, tag: u32) -> Frame {
    let mut buf = vec![0u8; ip_len + ETH_HEADER];
    buf[12] = 0x08;
    buf[14] = 0x45;
    buf[ETH_HEADER + 20..ETH_HEADER + 24].copy_from_slice(&tag.to_be_bytes());
    Frame {
        len: buf.len(),
        buf,
    }
}

fn tag(f: &Frame) -> u32 {
    u32::from_be_bytes(f.buf[ETH_HEADER + 20..ETH_HEADER + 24].try_into().unwrap())
}

/// Arrival instants: a burst every 3 ms of varying sizes (some bursts overflow the queue).
fn arrivals() -> Vec<(SimTime, usize)> {
    let mut rng = Rng::new(99);
    let mut out = Vec::new();
    for k in 0..40u64 {
        let t = SimTime::from_nanos(k * 3 * MS + rng.next_u64() % MS);
        for _ in 0..(1 + rng.next_u64() % 8) {
            out.push((t, 200 + (rng.next_u64() % 1300) as usize));
        }
    }
    out
}

/// The simulator's way: every end of transmission handled at its instant, in time order.
fn event_driven(drop: QueueDrop) -> Vec<(u32, u64)> {
    let mut d: CoreDirection<Frame> = CoreDirection::new(
        Box::new(Steps),
        config(drop),
        Steps.state_at(SimTime::ZERO),
        Rng::new(5),
    );
    let mut delivered = Vec::new();
    let mut pending: Option<SimTime> = None; // end of the transmission in progress
    let mut arrivals = arrivals().into_iter().enumerate().peekable();
    loop {
        let next_arrival = arrivals.peek().map(|(_, (t, _))| *t);
        match (pending, next_arrival) {
            (Some(done), a) if a.is_none_or(|a| done <= a) => {
                let (_, next) = d.finish(done, |_| SimDuration::ZERO);
                pending = next;
            }
            (_, Some(_)) => {
                let (i, (t, len)) = arrivals.next().unwrap();
                if let Offered::Started(done) = d.offer(frame(len, i as u32), t, std::mem::drop) {
                    pending = done;
                }
            }
            (None, None) => break,
            (Some(_), None) => unreachable!(),
        }
    }
    while d.next_arrival().is_some() {
        let at = d.next_arrival().unwrap();
        delivered.push((tag(&d.arrive()), at.as_nanos()));
    }
    delivered.sort_unstable();
    delivered
}

/// satcc-linkd's way: link clock = model time + 1 s, polled at irregular instants.
fn polled(drop: QueueDrop) -> Vec<(u32, u64)> {
    let origin = SimTime::from_nanos(1_000 * MS);
    let mut d = Direction::new(Box::new(Steps), config(drop), Rng::new(5));
    d.set_origin(origin);
    let mut rng = Rng::new(7);
    let mut out = Vec::new();
    let mut now = origin;
    for (i, (t, len)) in arrivals().into_iter().enumerate() {
        let t = origin + (t - SimTime::ZERO);
        while now < t {
            d.take_due(now, &mut out);
            now = (now + SimDuration::from_nanos(1 + rng.next_u64() % (700 * 1000))).min(t);
        }
        d.offer(t, frame(len, i as u32), std::mem::drop);
    }
    d.take_due(origin + SimDuration::from_secs(10), &mut out);
    let mut got: Vec<(u32, u64)> = out
        .into_iter()
        .map(|(at, f)| (tag(&f), at.as_nanos() - origin.as_nanos()))
        .collect();
    got.sort_unstable();
    got
}

#[test]
fn polling_on_a_real_clock_delivers_what_the_event_loop_delivers_to_the_nanosecond() {
    let (a, b) = (event_driven(QueueDrop::Tail), polled(QueueDrop::Tail));
    assert!(a.len() > 100, "{} deliveries", a.len());
    assert!(
        a.len() < arrivals().len(),
        "the queue and the loss must drop some"
    );
    assert_eq!(a, b);
}

#[test]
fn a_drop_front_queue_delivers_the_same_both_ways_and_not_what_drop_tail_does() {
    let (a, b) = (event_driven(QueueDrop::Front), polled(QueueDrop::Front));
    assert!(a.len() > 100, "{} deliveries", a.len());
    assert_eq!(a, b);
    assert_ne!(a, event_driven(QueueDrop::Tail), "the queue must overflow");
}
