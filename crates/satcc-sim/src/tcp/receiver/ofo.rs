//! The out-of-order queue: in-order advance of `rcv_nxt`, delivery of queued segments that
//! became in order (`tcp_ofo_queue`), and queueing with SACK/DSACK bookkeeping
//! (`tcp_data_queue_ofo`, `tcp_sack_new_ofo_skb`). See `mod.rs`'s header.

use super::*;

impl Receiver {
    pub(super) fn advance(&mut self, now: SimTime, end: u64) {
        let before = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.max(end);
        if self.ofo.is_empty() {
            // Nothing held out of order, so no SACK blocks either (the last delivery from the
            // queue dropped them all): only rcv_nxt moves.
            debug_assert!(self.ofo_pkts == 0 && self.ofo_bytes == 0 && self.sack_list.is_empty());
        } else {
            self.deliver_ofo();
        }
        let n = self.rcv_nxt - before;
        self.delivered_bytes += n;
        self.delivered_in_bin += n;
        if self.delivered_bytes >= self.complete_bytes {
            debug_assert!(self.completed_at.is_none());
            self.completed_at = Some(now);
            self.complete_bytes = u64::MAX;
        }
    }

    /// `tcp_ofo_queue`: what the new `rcv_nxt` reaches in the out-of-order queue is delivered;
    /// the SACK blocks below it are dropped.
    pub(super) fn deliver_ofo(&mut self) {
        // (`iter().next()`, not `first_key_value()`: it reads the length first, where the
        // latter walks down to a leaf of an emptied map)
        while let Some((&s, &e)) = self.ofo.iter().next() {
            if s > self.rcv_nxt {
                break;
            }
            self.ofo.pop_first();
            self.ofo_bytes -= e - s;
            self.rcv_nxt = self.rcv_nxt.max(e);
        }
        debug_assert_eq!(
            self.ofo_bytes,
            self.ofo.iter().map(|(s, e)| e - s).sum::<u64>(),
            "ofo_bytes"
        );
        if self.ofo.is_empty() {
            self.ofo_pkts = 0;
        } else {
            let held = self.ofo_bytes;
            self.ofo_pkts = self.ofo_pkts.min(held.div_ceil(self.advmss.max(1)));
        }
        let rcv_nxt = self.rcv_nxt;
        self.sack_list.retain(|&(_, e)| e > rcv_nxt);
    }

    pub(super) fn insert_ofo(&mut self, now: SimTime, seq: u64, end: u64, out: &mut Out) {
        // tcp_sack_new_ofo_skb: a segment that extends or opens a block beyond the first two
        // flushes a held ACK first, so the older blocks are reported.
        let block = self
            .sack_list
            .iter()
            .position(|&(s, e)| seq <= e && end >= s);
        if block.unwrap_or(self.sack_list.len()) >= SACK_BLOCKS_EXPECTED {
            self.tcp_sack_compress_send_ack(now, out);
        }
        let (mut lo, mut hi) = (seq, end);
        let mut dup = false;
        // Merge with overlapping or adjacent ranges. The ranges are disjoint and non-adjacent,
        // so their ends descend with their starts: those to merge are the highest ones starting
        // at or below `end`, down to the first that ends below `seq`.
        match self.ofo.range_mut(..=end).next_back() {
            Some((&s, e)) if s <= seq && *e >= seq => {
                // Within or extending the range starting at or below it (the usual case: the
                // next segment past the highest block): no other range can touch it.
                dup = *e >= end;
                lo = s;
                hi = (*e).max(end);
                self.ofo_bytes += hi - *e;
                *e = hi;
            }
            _ => {
                while let Some((&s, &e)) = self.ofo.range(..=end).next_back() {
                    if e < seq {
                        break;
                    }
                    if s <= seq && e >= end {
                        dup = true;
                    }
                    lo = lo.min(s);
                    hi = hi.max(e);
                    self.ofo.remove(&s);
                    self.ofo_bytes -= e - s;
                }
                self.ofo.insert(lo, hi);
                self.ofo_bytes += hi - lo;
            }
        }
        if !dup {
            self.ofo_pkts += 1;
        }
        if dup && self.sack {
            self.dsack = Some((seq, end));
        }
        // The block containing this segment moves to the front (RFC 2018 §4).
        self.sack_list.retain(|&(s, e)| e < lo || s > hi);
        self.sack_list.insert(0, (lo, hi));
        self.sack_list.truncate(packet::MAX_SACK_BLOCKS);
    }
}
