//! Undo of spurious cwnd reductions, F-RTO and reordering detection: the parts of Linux's
//! `net/ipv4/tcp_input.c` (6.18) named below, with RACK's DSACK-driven reordering window
//! from `tcp_recovery.c`. Functions keep the kernel's names without the `tcp_` prefix.
//!
//! Every reduction (Recovery, Loss) remembers where it began (`undo_marker` = snd_una) and how
//! many of its retransmissions are not yet proven needless (`undo_retrans`). It is undone —
//! cwnd back to the algorithm's `undo_cwnd` (Reno's default: max(cwnd, prior_cwnd)), ssthresh
//! back to `prior_ssthresh` — when
//! - DSACKs report every retransmission as a duplicate (`try_undo_dsack`, TCPDSACKUndo);
//! - an ACK echoes a TSval older than the first retransmission (Eifel, RFC 3522:
//!   `packet_delayed`), at the end of Recovery (`try_undo_recovery`, TCPFullUndo), on a partial
//!   ACK in Recovery (`try_undo_partial`, TCPPartialUndo) or in Loss (`try_undo_loss`,
//!   TCPLossUndo);
//! - F-RTO (RFC 5682, `sysctl_tcp_frto` = 2) finds, after an RTO, never-retransmitted data
//!   (S)ACKed once new data was sent (`process_loss`, TCPSpuriousRTOs).
//!
//! An ECN echo (or CWR) forbids restoring cwnd (`prior_ssthresh` = 0), as in Linux.

use satcc_cc::CaState;
use satcc_core::SimTime;

use super::{Flags, Rexmit, Sender};

/// Linux `sysctl_tcp_max_reordering`.
const MAX_REORDERING: u32 = 300;
/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries a grown RACK reordering window persists for.
const RACK_RECOVERY_THRESH: u8 = 16;

/// The undo state of the current or last reduction (`struct tcp_sock`'s undo fields).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Undo {
    /// `tp->undo_marker`: snd_una when the reduction began; None = nothing to undo (Linux 0).
    pub marker: Option<u64>,
    /// `tp->undo_retrans`: retransmissions of the episode not yet DSACKed; None is Linux's −1
    /// (nothing was retransmitted yet).
    pub retrans: Option<u32>,
    /// `tp->prior_ssthresh`: the ssthresh an undo restores; 0 = an undo restores neither cwnd
    /// nor ssthresh (congestion was proven by ECN).
    pub prior_ssthresh: u32,
    /// `tp->retrans_stamp`: TSval (sender clock) of the episode's first retransmission.
    pub retrans_stamp: Option<u64>,
    /// `tp->frto`: F-RTO is watching the current Loss episode.
    pub frto: bool,
}

/// Undos counted as Linux's MIB counters (`nstat`: TcpExt…).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UndoStats {
    /// TCPFullUndo: a Recovery ended and proved spurious (Eifel).
    pub full: u64,
    /// TCPPartialUndo: a partial ACK in Recovery proved the hole was a delayed packet.
    pub partial: u64,
    /// TCPDSACKUndo: DSACKs covered every retransmission.
    pub dsack: u64,
    /// TCPLossUndo: an RTO's Loss episode undone (Eifel or F-RTO).
    pub loss: u64,
    /// TCPSpuriousRTOs: of those, found by F-RTO.
    pub spurious_rtos: u64,
}

impl Sender {
    /// `tcp_init_undo`.
    pub(super) fn init_undo(&mut self) {
        self.undo.marker = Some(self.tcp.snd_una);
        // Retransmissions still in flight may cause DSACKs later.
        self.undo.retrans = (self.tcp.retrans_out > 0).then_some(self.tcp.retrans_out);
    }

    /// `tcp_current_ssthresh`: the ssthresh an undo may return to.
    pub(super) fn current_ssthresh(&self) -> u32 {
        let t = &self.tcp;
        if self.in_cwnd_reduction() {
            t.ssthresh
        } else {
            t.ssthresh.max((t.cwnd >> 1) + (t.cwnd >> 2))
        }
    }

    /// `tcp_tsopt_ecr_before`: this ACK echoes a TSval older than `when`.
    fn tsopt_ecr_before(&self, when: u64) -> bool {
        self.rcv_tsecr.is_some_and(|ecr| ecr < when)
    }

    /// `tcp_packet_delayed` (Linux ≥ 6.16): the echoed TSval predates the first retransmission,
    /// or nothing has been retransmitted yet in this episode.
    fn packet_delayed(&self) -> bool {
        match self.undo.retrans_stamp {
            Some(stamp) => self.tsopt_ecr_before(stamp),
            // Non-SACK flows clear retrans_stamp at snd_una == high_seq (preventing reopen).
            None => self.sack || self.tcp.snd_una < self.high_seq,
        }
    }

    /// `tcp_any_retrans_done`.
    pub(super) fn any_retrans_done(&self) -> bool {
        self.tcp.retrans_out > 0 || (!self.sb.is_empty() && self.sb.get(self.sb.head).ever_retrans)
    }

    /// `tcp_retrans_stamp_cleanup`.
    pub(super) fn retrans_stamp_cleanup(&mut self) {
        if !self.any_retrans_done() {
            self.undo.retrans_stamp = None;
        }
    }

    /// `tcp_may_undo`.
    fn may_undo(&self) -> bool {
        self.undo.marker.is_some() && (self.undo.retrans == Some(0) || self.packet_delayed())
    }

    /// `tcp_undo_cwnd_reduction`: restore cwnd and ssthresh; with `unmark_loss` forget every
    /// loss mark (the segments are in flight after all).
    fn undo_cwnd_reduction(&mut self, now: SimTime, unmark_loss: bool) {
        if unmark_loss {
            for s in self.sb.iter_mut() {
                s.lost = false;
            }
            self.tcp.lost_out = 0;
            self.sb.retransmit_hint = self.sb.head;
            self.rebuild_tsorted();
        }
        if self.undo.prior_ssthresh != 0 {
            self.tcp.cwnd = self.cc.undo_cwnd(now, &self.tcp).max(1);
            if self.undo.prior_ssthresh > self.tcp.ssthresh {
                self.tcp.ssthresh = self.undo.prior_ssthresh;
                self.cwr_pending = false; // tcp_ecn_withdraw_cwr
            }
        }
        self.tcp.cwnd_stamp = now;
        self.undo.marker = None;
        self.rack.advanced = true; // force RACK to re-examine losses
    }

    /// RACK's transmission-order list after loss marks were dropped: every segment in flight
    /// again, by last transmission (Linux keeps lost segments in the list; the simulator drops
    /// them lazily, so it rebuilds the list here).
    fn rebuild_tsorted(&mut self) {
        let head = self.sb.head;
        let mut v: Vec<(u64, SimTime)> = self
            .sb
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.sacked)
            .map(|(i, s)| (head + i as u64, s.xmit))
            .collect();
        v.sort_by_key(|&(i, t)| (t, i));
        self.sb.set_tsorted(v.into());
    }

    /// `tcp_is_non_sack_preventing_reopen`: NewReno holds the state until something above
    /// high_seq is acknowledged (RFC 6582).
    fn is_non_sack_preventing_reopen(&mut self) -> bool {
        if self.tcp.snd_una == self.high_seq && !self.sack {
            self.retrans_stamp_cleanup();
            return true;
        }
        false
    }

    /// `tcp_try_undo_recovery`: the episode is over (snd_una ≥ high_seq); undo it if it was
    /// spurious. Returns true if the state is held (NewReno).
    pub(super) fn try_undo_recovery(&mut self, now: SimTime) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(now, false);
            if self.tcp.ca_state == CaState::Loss {
                self.stats.undo.loss += 1;
            } else {
                self.stats.undo.full += 1;
            }
        } else if self.rack.reo_wnd_persist > 0 {
            self.rack.reo_wnd_persist -= 1;
        }
        if self.is_non_sack_preventing_reopen() {
            return true;
        }
        self.set_state(now, CaState::Open);
        false
    }

    /// `tcp_try_undo_dsack`: DSACKs acknowledged every retransmission.
    pub(super) fn try_undo_dsack(&mut self, now: SimTime) -> bool {
        if self.undo.marker.is_some() && self.undo.retrans == Some(0) {
            self.rack.reo_wnd_persist = (self.rack.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
            self.undo_cwnd_reduction(now, false);
            self.stats.undo.dsack += 1;
            return true;
        }
        false
    }

    /// `tcp_try_undo_loss`: undo an RTO's reduction on a partial ACK (Eifel) or by F-RTO.
    fn try_undo_loss(&mut self, now: SimTime, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo() {
            self.undo_cwnd_reduction(now, true);
            self.stats.undo.loss += 1;
            if frto_undo {
                self.stats.undo.spurious_rtos += 1;
            }
            self.retransmits = 0;
            if self.is_non_sack_preventing_reopen() {
                return true;
            }
            if frto_undo || self.sack {
                self.set_state(now, CaState::Open);
            }
            return true;
        }
        false
    }

    /// `tcp_try_undo_partial`: a partial ACK in Recovery; if it was for a delayed original,
    /// undo. Returns true when the caller must stop (retransmissions still out).
    pub(super) fn try_undo_partial(&mut self, now: SimTime, prior_snd_una: u64) -> bool {
        if self.undo.marker.is_some() && self.packet_delayed() {
            // Plain luck: the hole was filled by a delayed packet, not a retransmission.
            self.check_sack_reordering(prior_snd_una, true);
            if self.tcp.retrans_out > 0 {
                return true;
            }
            self.retrans_stamp_cleanup();
            self.undo_cwnd_reduction(now, true);
            self.stats.undo.partial += 1;
            self.try_keep_open(now);
        }
        false
    }

    /// `tcp_process_loss`: an ACK in the Loss state, with F-RTO (RFC 5682 §3.1, SACK version).
    pub(super) fn process_loss(
        &mut self,
        now: SimTime,
        flag: &Flags,
        num_dupack: u32,
        rexmit: &mut Rexmit,
    ) {
        let recovered = self.tcp.snd_una >= self.high_seq;
        if flag.data_acked && self.try_undo_loss(now, false) {
            return;
        }
        if self.undo.frto {
            // Step 3.b: the timeout was spurious if never-retransmitted data is (s)acked.
            if flag.orig_sack_acked && self.try_undo_loss(now, true) {
                return;
            }
            if self.tcp.snd_nxt > self.high_seq {
                if flag.data_sacked || num_dupack > 0 {
                    self.undo.frto = false; // step 3.a: the loss was real
                }
            } else if flag.data_acked && !recovered {
                self.high_seq = self.tcp.snd_nxt;
                // Step 2.b: send new data (after cwnd is updated) instead of retransmitting.
                if !self.all_sent() && self.tcp.snd_una + self.snd_wnd > self.tcp.snd_nxt {
                    *rexmit = Rexmit::New;
                    return;
                }
                self.undo.frto = false;
            }
        }
        if recovered {
            // Step 2.a and the first part of 3.a.
            self.try_undo_recovery(now);
            return;
        }
        if !self.sack {
            if self.tcp.snd_nxt > self.high_seq && num_dupack > 0 {
                self.add_reno_sack(num_dupack, flag.ece);
            } else if flag.data_acked {
                self.tcp.sacked_out = 0;
            }
        }
        *rexmit = Rexmit::Lost;
    }

    /// `tcp_highest_sack_seq`: end of the highest SACKed segment (snd_una without SACKs).
    #[inline]
    pub(super) fn highest_sack_seq(&self) -> u64 {
        if self.tcp.sacked_out == 0 {
            return self.tcp.snd_una;
        }
        match self.sb.highest_sacked() {
            Some(end) => self.sb.end(end - 1).min(self.tcp.snd_nxt),
            None => self.tcp.snd_nxt,
        }
    }

    /// `tcp_check_sack_reordering`: data below the highest SACK (`low_seq`) was delivered
    /// without a retransmission: reordering, as far as `fack − low_seq`. `ts`: found by
    /// timestamps (Eifel) rather than SACK.
    pub(super) fn check_sack_reordering(&mut self, low_seq: u64, _ts: bool) {
        let fack = self.highest_sack_seq();
        if low_seq >= fack {
            return;
        }
        let mss = self.mss as u64;
        let metric = fack - low_seq;
        if metric > self.reordering as u64 * mss {
            self.reordering = (metric.div_ceil(mss)).min(MAX_REORDERING as u64) as u32;
        }
        self.reord_seen += 1;
    }

    /// `tcp_dsack_seen`: account a DSACK of `[start, end)`; the number of duplicate segments,
    /// 0 for a dubious DSACK (larger than any window, or more than was retransmitted).
    fn dsack_seen(&mut self, start: u64, end: u64, flag: &mut Flags) -> u32 {
        if start >= end {
            return 0;
        }
        let len = end - start;
        if len > self.max_window {
            return 0;
        }
        let mss = self.mss as u64;
        let mut dup_segs = 1u32;
        if len > mss {
            dup_segs = len.div_ceil(mss) as u32;
        } else if self.tlp_high_seq != 0 && self.tlp_high_seq == end {
            flag.dsack_tlp = true;
        }
        self.dsack_dups += dup_segs as u64;
        // Skip the DSACK if the duplicates were not retransmitted by this sender.
        if self.dsack_dups > self.stats.retransmitted_packets {
            return 0;
        }
        // Grow RACK's reordering window for DSACKs after reordering was seen (not for TLPs).
        if self.reord_seen > 0 && !flag.dsack_tlp {
            self.rack.dsack_seen = true;
        }
        flag.dsack = true;
        // A spurious retransmission was delivered.
        self.tcp.delivered += dup_segs as u64;
        if flag.ece {
            self.tcp.delivered_ce += dup_segs as u64;
        }
        dup_segs
    }

    /// `tcp_check_dsack`: is the first SACK block a DSACK (RFC 2883)? Counts a DSACK for
    /// data already below `prior_snd_una` against `undo_retrans`.
    pub(super) fn check_dsack(
        &mut self,
        blocks: &[(u64, u64)],
        ack: u64,
        prior_snd_una: u64,
        flag: &mut Flags,
    ) -> bool {
        let Some(&(s0, e0)) = blocks.first() else {
            return false;
        };
        let is_dsack = s0 < ack || blocks.get(1).is_some_and(|&(s1, e1)| e0 <= e1 && s0 >= s1);
        if !is_dsack {
            return false;
        }
        let dup_segs = self.dsack_seen(s0, e0, flag);
        if dup_segs == 0 {
            return false;
        }
        // DSACK for already forgotten data: dumb counting.
        if let (Some(marker), Some(r)) = (self.undo.marker, self.undo.retrans) {
            if r > 0 && e0 <= prior_snd_una && e0 > marker {
                self.undo.retrans = Some(r.saturating_sub(dup_segs));
            }
        }
        true
    }

    /// The DSACK part of `tcp_sacktag_one` for the segments `[a, b)` still queued: a DSACKed
    /// retransmission is one fewer needless retransmission to wait for; a DSACKed segment that
    /// was already SACKed has no retransmission in flight any more. Returns the lowest
    /// already-SACKed retransmitted start (reordering evidence, `state->reord`).
    pub(super) fn dsack_tag(&mut self, a: u64, b: u64) -> Option<u64> {
        let (a, b) = (a.max(self.sb.head), b.min(self.sb.tail()));
        let mut reord = None;
        for idx in a..b {
            let start = self.sb.start(idx);
            let end = self.sb.end(idx).min(self.tcp.snd_nxt);
            let s = self.sb.get_mut(idx);
            if !s.ever_retrans {
                continue;
            }
            if let (Some(marker), Some(r)) = (self.undo.marker, self.undo.retrans) {
                if r > 0 && end > marker {
                    self.undo.retrans = Some(r - 1);
                }
            }
            if s.sacked {
                reord.get_or_insert(start);
                if s.retrans {
                    s.retrans = false;
                    self.tcp.retrans_out -= 1;
                }
            }
        }
        reord
    }

    /// `tcp_rack_reo_wnd` (tcp_recovery.c): min_rtt/4 per step, at most srtt; zero in Recovery
    /// or with `reordering` segments SACKed, until reordering has been seen.
    pub(super) fn rack_reo_wnd(&self) -> u64 {
        if self.reord_seen == 0
            && (self.tcp.ca_state >= CaState::Recovery || self.tcp.sacked_out >= self.reordering)
        {
            return 0;
        }
        let quarter = self.rtt.min_rtt_us().min(u64::MAX / 2) / 4;
        quarter
            .saturating_mul(self.rack.reo_wnd_steps as u64)
            .min(self.rtt.srtt_us())
    }

    /// `tcp_rack_update_reo_wnd`: one more min_rtt/4 step per round with a DSACK (after
    /// reordering was seen); back to one step after 16 recoveries without.
    pub(super) fn rack_update_reo_wnd(&mut self, prior_delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        // Disregard a DSACK if a round has not passed since the window was adjusted.
        if prior_delivered < self.rack.last_delivered {
            self.rack.dsack_seen = false;
        }
        if self.rack.dsack_seen {
            self.rack.reo_wnd_steps = self.rack.reo_wnd_steps.saturating_add(1);
            self.rack.dsack_seen = false;
            self.rack.last_delivered = self.tcp.delivered;
            self.rack.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.rack.reo_wnd_persist == 0 {
            self.rack.reo_wnd_steps = 1;
        }
    }

    /// `tcp_enter_loss`'s reordering reset: a timeout in Disorder after many dupacks means the
    /// reordering degree was over-estimated.
    pub(super) fn reset_reordering_on_timeout(&mut self, reordering_sysctl: u32) {
        if self.tcp.ca_state <= CaState::Disorder && self.tcp.sacked_out >= reordering_sysctl {
            self.reordering = self.reordering.min(reordering_sysctl);
        }
    }
}

#[cfg(test)]
mod tests {
    use satcc_cc::{CaState, INFINITE_SSTHRESH};
    use satcc_core::{SimDuration, SimTime};

    use super::super::Sender;
    use crate::packet::{Kind, Packet};
    use crate::tcp::Out;
    use satcc_core::scenario::Flow;

    const MSS: u64 = 1448;

    /// A Reno sender with 10 segments in flight after a 100 ms handshake.
    fn established(timestamps: bool) -> (Sender, SimTime) {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = timestamps;
        let cc = satcc_cc::lookup("reno", &satcc_cc::Params::new()).unwrap();
        let mut s = Sender::new(&cfg, 1, cc);
        let mut out = Out::default();
        s.connect(SimTime::ZERO, &mut out);
        let mut synack = Packet::new(0, Kind::SynAck, 0);
        synack.rwnd = 1 << 20;
        synack.tsecr = u64::from(timestamps);
        let t = SimTime::ZERO + SimDuration::from_millis(100);
        s.on_packet(t, &synack, &mut out);
        assert_eq!(s.tcp.packets_out, 10);
        (s, t)
    }

    /// An ACK up to segment `ack_seg` echoing `tsecr`, with SACK blocks in segments.
    fn ack(s: &mut Sender, at: SimTime, ack_seg: u64, tsecr: u64, blocks: &[(u64, u64)]) -> Out {
        let mut p = Packet::new(0, Kind::Ack, 0);
        p.ack = ack_seg * MSS;
        p.rwnd = 1 << 20;
        p.tsecr = tsecr;
        for (i, &(a, b)) in blocks.iter().enumerate() {
            p.sack[i] = (a * MSS, b * MSS);
        }
        p.nsack = blocks.len() as u8;
        let mut out = Out::default();
        s.on_packet(at, &p, &mut out);
        out
    }

    fn ms(t: SimTime, x: u64) -> SimTime {
        t + SimDuration::from_millis(x)
    }

    /// The retransmission timeout, as if no tail loss probe had been sent first.
    fn fire_rto(s: &mut Sender, at: SimTime) -> Out {
        let mut out = Out::default();
        s.tcp.now = at;
        s.on_rto(at, &mut out);
        out
    }

    #[test]
    fn dsack_for_every_retransmission_undoes_the_reduction() {
        // Segment 0 is delayed past segments 1..9: RACK retransmits it and halves cwnd.
        // Without timestamps only the receiver's DSACK for the duplicate proves it spurious.
        let (mut s, t) = established(false);
        ack(&mut s, ms(t, 100), 0, 0, &[(1, 10)]);
        assert_eq!(s.tcp.ca_state, CaState::Recovery);
        assert_eq!(s.stats.retransmitted_packets, 1);
        assert_eq!(s.tcp.ssthresh, 5);
        // The original arrives: everything is acknowledged, Recovery ends at ssthresh.
        ack(&mut s, ms(t, 101), 10, 0, &[]);
        assert_eq!(s.tcp.ca_state, CaState::Open);
        assert_eq!(s.tcp.cwnd, 5);
        // Then the retransmission arrives as a duplicate: DSACK [0, 1).
        ack(&mut s, ms(t, 120), 10, 0, &[(0, 1)]);
        assert_eq!(s.stats.undo.dsack, 1);
        assert_eq!(s.tcp.cwnd, 10, "undo_cwnd = max(cwnd, prior_cwnd)");
        assert_eq!(
            s.tcp.ssthresh, INFINITE_SSTHRESH,
            "back in the initial slow start"
        );
    }

    #[test]
    fn a_dsack_for_a_retransmission_that_was_never_sent_is_ignored() {
        let (mut s, t) = established(false);
        ack(&mut s, ms(t, 100), 0, 0, &[(1, 10)]);
        ack(&mut s, ms(t, 101), 10, 0, &[]);
        // Two duplicates reported, one retransmitted: the DSACK is dubious (`tcp_dsack_seen`).
        ack(&mut s, ms(t, 120), 10, 0, &[(0, 2)]);
        assert_eq!(s.stats.undo.dsack, 0);
        assert_eq!(s.tcp.cwnd, 5);
    }

    #[test]
    fn eifel_timestamps_undo_a_recovery_ended_by_the_delayed_original() {
        // With timestamps the cumulative ACK echoes the original's TSval (sent at 100 ms),
        // older than the retransmission's (200 ms): a full undo at the end of Recovery.
        let (mut s, t) = established(true);
        ack(&mut s, ms(t, 100), 0, 101, &[(1, 10)]);
        assert_eq!(s.tcp.ca_state, CaState::Recovery);
        ack(&mut s, ms(t, 101), 10, 101, &[]);
        assert_eq!(s.stats.undo.full, 1);
        assert_eq!(s.tcp.ca_state, CaState::Open);
        assert_eq!(
            s.tcp.cwnd, 11,
            "10 restored, +1 slow start for the segment this ACK acked"
        );
        assert_eq!(s.tcp.ssthresh, INFINITE_SSTHRESH);
    }

    #[test]
    fn a_recovery_repaired_by_its_retransmission_is_not_undone() {
        let (mut s, t) = established(true);
        ack(&mut s, ms(t, 100), 0, 101, &[(1, 10)]);
        // The ACK echoes the retransmission's TSval (200 ms + 1): the loss was real.
        let out = ack(&mut s, ms(t, 200), 10, 201, &[]);
        assert_eq!(s.stats.undo, super::UndoStats::default());
        assert_eq!(s.tcp.cwnd, 5);
        assert_eq!(s.tcp.ssthresh, 5);
        assert!(out.pkts.iter().all(|p| !p.retrans));
    }

    #[test]
    fn spurious_rto_detected_by_frto_restores_cwnd() {
        // No timestamps: only F-RTO can tell. The RTO fires 1 s after the window was sent.
        let (mut s, t) = established(false);
        let t_rto = ms(t, 1000);
        let out = fire_rto(&mut s, t_rto);
        assert_eq!(out.pkts.iter().filter(|p| p.retrans).count(), 1);
        assert_eq!(s.tcp.ca_state, CaState::Loss);
        assert_eq!(s.tcp.cwnd, 1);
        // The originals were only delayed: their ACKs arrive. The first acknowledges only the
        // head (which was retransmitted: ambiguous), so F-RTO sends new data (step 2.b) instead
        // of retransmitting.
        let out = ack(&mut s, ms(t_rto, 10), 1, 0, &[]);
        let (new, retx): (Vec<&Packet>, Vec<&Packet>) = out.pkts.iter().partition(|p| !p.retrans);
        assert!(retx.is_empty(), "F-RTO must not retransmit yet");
        assert!(
            !new.is_empty() && new.iter().all(|p| p.seq >= 10 * MSS),
            "new data after the RTO"
        );
        assert_eq!(s.tcp.ca_state, CaState::Loss);
        // The next ACK covers never-retransmitted data: the RTO was spurious (step 3.b).
        ack(&mut s, ms(t_rto, 11), 3, 0, &[]);
        assert_eq!(s.stats.undo.spurious_rtos, 1);
        assert_eq!(s.stats.undo.loss, 1);
        assert_eq!(s.tcp.ca_state, CaState::Open);
        assert!(
            s.tcp.cwnd >= 10,
            "cwnd {} restored to the pre-RTO 10",
            s.tcp.cwnd
        );
        assert_eq!(s.tcp.ssthresh, INFINITE_SSTHRESH);
        assert_eq!(s.tcp.lost_out, 0, "loss marks are forgotten");
    }

    #[test]
    fn frto_keeps_the_reduction_when_the_loss_was_real() {
        let (mut s, t) = established(false);
        let t_rto = ms(t, 1000);
        fire_rto(&mut s, t_rto);
        // The retransmitted head is acknowledged, the rest was really lost.
        let out = ack(&mut s, ms(t_rto, 100), 1, 0, &[]);
        let new: Vec<u64> = out
            .pkts
            .iter()
            .filter(|p| !p.retrans)
            .map(|p| p.seq / MSS)
            .collect();
        assert!(!new.is_empty());
        // The new data is SACKed above the hole: step 3.a, conventional recovery.
        let out = ack(&mut s, ms(t_rto, 200), 1, 0, &[(new[0], new[0] + 1)]);
        assert_eq!(s.stats.undo, super::UndoStats::default());
        assert_eq!(s.tcp.ssthresh, 5);
        assert!(
            out.pkts.iter().any(|p| p.retrans),
            "lost segments are retransmitted"
        );
    }

    #[test]
    fn an_ack_of_never_retransmitted_data_right_after_an_rto_proves_it_spurious() {
        let (mut s, t) = established(false);
        let t_rto = ms(t, 1000);
        fire_rto(&mut s, t_rto);
        // Segment 1 was never retransmitted: its ACK can only be for the original.
        ack(&mut s, ms(t_rto, 10), 2, 0, &[]);
        assert_eq!(s.stats.undo.spurious_rtos, 1);
        assert_eq!(s.tcp.ca_state, CaState::Open);
    }

    #[test]
    fn eifel_undoes_a_spurious_rto_on_the_first_ack() {
        let (mut s, t) = established(true);
        let t_rto = ms(t, 1000);
        fire_rto(&mut s, t_rto);
        // The ACK of the delayed originals echoes their TSval (100 ms + 1), before the RTO.
        ack(&mut s, ms(t_rto, 10), 2, 101, &[]);
        assert_eq!(s.stats.undo.loss, 1);
        assert_eq!(
            s.stats.undo.spurious_rtos, 0,
            "found by timestamps, not by F-RTO"
        );
        assert_eq!(s.tcp.ca_state, CaState::Open);
        assert!(s.tcp.cwnd >= 10);
        assert_eq!(s.tcp.ssthresh, INFINITE_SSTHRESH);
    }

    #[test]
    fn an_ecn_echo_in_recovery_forbids_restoring_cwnd() {
        let (mut s, t) = established(false);
        ack(&mut s, ms(t, 100), 0, 0, &[(1, 10)]);
        // A duplicate ACK with ECE during Recovery: congestion is proven (`prior_ssthresh` = 0).
        s.tcp.ecn_ok = true;
        let mut p = Packet::new(0, Kind::Ack, 0);
        p.rwnd = 1 << 20;
        p.ece = true;
        p.sack[0] = (MSS, 10 * MSS);
        p.nsack = 1;
        s.on_packet(ms(t, 100), &p, &mut Out::default());
        s.tcp.ecn_ok = false;
        ack(&mut s, ms(t, 101), 10, 0, &[]);
        ack(&mut s, ms(t, 120), 10, 0, &[(0, 1)]);
        assert_eq!(
            s.stats.undo.dsack, 1,
            "the undo happens, as Linux counts it"
        );
        assert_eq!(s.tcp.cwnd, 5, "but restores neither cwnd");
        assert_eq!(s.tcp.ssthresh, 5, "nor ssthresh");
    }

    #[test]
    fn sacking_a_hole_below_the_highest_sack_is_reordering_and_keeps_racks_window() {
        let (mut s, t) = established(true);
        // Segment 5 SACKed, then 1..4 fill in below it without a retransmission.
        ack(&mut s, ms(t, 100), 0, 101, &[(5, 6)]);
        assert_eq!(s.reord_seen, 0);
        ack(&mut s, ms(t, 100), 0, 101, &[(1, 6)]);
        assert_eq!(s.reord_seen, 1);
        // RACK's window no longer collapses with 3 or more segments SACKed.
        assert!(s.tcp.sacked_out >= 3);
        assert_eq!(s.rack_reo_wnd(), 25_000, "min_rtt / 4");
    }
}
