//! ACK processing, as Linux's `tcp_input.c` does it: `tcp_ack` (window update, SACK tagging
//! `tcp_sacktag_write_queue`, the cumulative ACK `tcp_clean_rtx_queue` with Karn's RTT samples,
//! `tcp_rack_advance`), the debug-build counter check (`tcp_verify_left_out`), and the cwnd
//! update after an ACK (`tcp_cong_control`, `tcp_may_raise_cwnd`, `tcp_update_pacing_rate`).
//! The loss state machine it calls is `sender/recovery.rs`.

use super::rate::rate_skb_delivered;
use super::*;

impl Sender {
    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        // tcp_replace_ts_recent: every pure ACK sits at rcv_wup; PAWS keeps the newest TSval.
        self.ts_recent = self.ts_recent.max(pkt.tsval);
        match pkt.kind {
            Kind::SynAck => self.on_synack(now, pkt, out),
            Kind::Ack if self.is_established() => self.on_ack(now, pkt, out),
            _ => {}
        }
    }

    /// `tcp_ack`.
    pub(super) fn on_ack(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        self.tcp.now = now;
        let ack = pkt.ack;
        if ack > self.tcp.snd_nxt {
            return; // ahead of what was sent
        }
        if ack < self.tcp.snd_una {
            // `tcp_ack`'s old_ack: an ACK below snd_una (reordered) but within
            // min(max_window, bytes_acked) of it still carries SACK information; one further
            // back is dropped (RFC 5961 §5.2). Sequence numbers start at 0 here, so
            // bytes_acked is snd_una.
            let reach = self.max_window.min(self.tcp.snd_una);
            if self.sack && pkt.nsack > 0 && ack + reach >= self.tcp.snd_una {
                self.old_ack(now, pkt, out);
            }
            return;
        }
        let prior_snd_una = self.tcp.snd_una;
        let prior_packets = self.tcp.packets_out;
        let prior_in_flight = self.tcp.in_flight();
        let prior_delivered = self.tcp.delivered;
        let prior_lost = self.tcp.lost;
        let mut flag = Flags {
            win_update: pkt.rwnd != self.snd_wnd,
            ..Flags::default()
        };
        if flag.win_update && !self.all_sent() {
            // `tcp_ack_update_window`: a new window with data queued checks for idleness
            // (a window reopening after zero-window probes restarts cwnd).
            self.snd_wnd = pkt.rwnd;
            self.slow_start_after_idle_check(now);
        }
        self.snd_wnd = pkt.rwnd;
        self.max_window = self.max_window.max(pkt.rwnd);
        flag.ece = self.tcp.ecn_ok && pkt.ece;
        // `rx_opt.rcv_tsecr` for undo (Eifel); the sender's TSval clock is ts_now's.
        self.rcv_tsecr = (self.timestamps && pkt.tsecr > 0).then_some(pkt.tsecr);
        if ack > prior_snd_una {
            self.retransmits = 0; // icsk_retransmits
        }
        self.probes_out = 0; // `tcp_ack`: the peer answered
        let prior_fack = self.highest_sack_seq();
        // `tp->rx_opt.rcv_tsval/rcv_tsecr` are not passed on yet: TCP-LP's remote-clock
        // estimator collapses the flow when fed them (0.3 of 48 Mbit/s alone on a link), so
        // LP runs on its documented RTT fallback until that is fixed.

        // Rate sample being built (`struct rate_sample`).
        let mut rs = RateSample::default();

        // --- SACK (tcp_sacktag_write_queue)
        let sackt = if self.sack && pkt.nsack > 0 {
            self.sacktag_write_queue(now, pkt, prior_snd_una, prior_fack, &mut flag, &mut rs)
        } else {
            None
        };

        // --- cumulative ACK (tcp_clean_rtx_queue)
        let mut pkts_acked = 0u32;
        // RTTs from the first and the last newly acked never-retransmitted segment (µs).
        let mut acked_rtt: Option<(u64, u64)> = None;
        if ack > prior_snd_una {
            flag.data_acked = true;
            let new_head = if self.size.is_some_and(|s| ack >= s) {
                self.sb.tail()
            } else {
                self.sb.idx_floor(ack)
            };
            let fast_ack = self.fast_ack();
            let tcp = &mut self.tcp;
            let rack = &mut self.rack;
            let first_tx_mstamp = &mut self.first_tx_mstamp;
            let min_rtt = self.rtt.min_rtt_us();
            let sack = self.sack;
            let high_seq = self.high_seq;
            let snd_nxt = tcp.snd_nxt;
            // `reord` of tcp_clean_rtx_queue: lowest acked never-retransmitted un-SACKed seq.
            let acked_reord;
            let head = self.sb.head;
            if new_head > head
                && head >= self.sb.retrans_end
                && (tcp.sacked_out | tcp.lost_out) == 0
                && fast_ack
            {
                // `tcp_clean_rtx_queue` over a run of segments each sent once, in index order,
                // none SACKed or lost (no counter to undo, Karn never applies): what its loop
                // does per segment summed at once. `tcp_rate_skb_delivered` and
                // `tcp_rack_advance` keep the most recently sent segment, which here is the
                // last one; `FLAG_ORIG_SACK_ACKED` holds if it holds for the first one.
                let n = new_head - head;
                acked_reord = self.sb.start(head);
                if self.sb.end(head).min(snd_nxt) <= high_seq {
                    flag.orig_sack_acked = true;
                }
                let (first_xmit, last) = self.sb.pop_acked_run(new_head);
                pkts_acked = n as u32;
                // The last segment's RTT is also RACK's (`tcp_rack_advance`): taken once.
                let last_us = now.saturating_since(last.xmit).as_micros();
                acked_rtt = Some((now.saturating_since(first_xmit).as_micros(), last_us));
                if sack {
                    tcp.delivered += n;
                    if flag.ece {
                        tcp.delivered_ce += n;
                    }
                }
                rate_skb_delivered(&mut rs, first_tx_mstamp, new_head - 1, last);
                rack_advance_rtt(rack, new_head - 1, last, last_us, min_rtt);
                tcp.packets_out -= n as u32;
            } else {
                (pkts_acked, acked_rtt, acked_reord) =
                    self.clean_rtx_queue_walk(now, new_head, &mut flag, &mut rs);
            }
            self.tcp.snd_una = ack;
            if !self.sack {
                self.remove_reno_sacks(pkts_acked, flag.ece);
                // Without SACK bits a retransmitted segment cannot prove the progress original.
                if flag.retrans_data_acked {
                    flag.orig_sack_acked = false;
                }
            } else if acked_reord < prior_fack {
                // A never-retransmitted hole got filled: reordering.
                self.check_sack_reordering(acked_reord, false);
            }
            if self.size.is_some_and(|s| ack >= s) && self.acked_all_at.is_none() {
                self.acked_all_at = Some(now);
            }
        }

        // --- RTT (tcp_ack_update_rtt)
        let mut seq_rtt = acked_rtt.map(|r| r.0);
        let mut ca_rtt = acked_rtt.map(|r| r.1);
        if seq_rtt.is_none() {
            if let Some((f, l)) = sackt {
                seq_rtt = Some(now.saturating_since(f).as_micros());
                ca_rtt = Some(now.saturating_since(l).as_micros());
            }
        }
        if seq_rtt.is_none() && self.timestamps && pkt.tsecr > 0 && flag.data_acked {
            let us = self.ts_now(now).saturating_sub(pkt.tsecr) * 1000;
            seq_rtt = Some(us);
            ca_rtt = Some(us);
        }
        if let Some(m) = seq_rtt {
            self.rtt.update_min_rtt(now, ca_rtt.unwrap_or(m));
            self.rtt.sample(m, self.tcp.snd_una, self.tcp.snd_nxt);
            self.stats.rtt.record(m);
            self.backoff = 0;
            self.sync_rtt();
        }

        // --- in_ack_event and pkts_acked (skipped, as Linux skips NULL ops, for an algorithm
        // that implements neither)
        if self.has_ack_hooks {
            self.cc.on_ack_event(
                now,
                &mut self.tcp,
                AckEventFlags {
                    slow_path: !flag.data_acked || flag.data_sacked,
                    window_update: flag.win_update,
                    ece: flag.ece,
                },
            );
        }
        if self.has_ack_hooks && (pkts_acked > 0 || flag.data_sacked) {
            let sample = AckSample {
                ack_seq: ack,
                pkts_acked,
                rtt_us: ca_rtt,
                prior_in_flight,
                ece: flag.ece,
                // tcp_clean_rtx_queue fills the rate sample before `pkts_acked`: NV's
                // `in_flight` is `mss * (delivered - prior_delivered)`
                prior_delivered: rs.prior_delivered,
                ..AckSample::default()
            };
            self.cc.on_pkts_acked(now, &mut self.tcp, &sample);
        }

        // --- RACK's reordering window (tcp_rack_update_reo_wnd)
        self.rack_update_reo_wnd(rs.prior_delivered);

        // --- TLP episode (tcp_process_tlp_ack)
        if self.tlp_high_seq != 0 && ack >= self.tlp_high_seq {
            self.process_tlp_ack(now, ack, &flag);
        }

        // --- loss state machine
        if flag.data_acked {
            self.set_xmit_timer(now, out);
        }
        // Every term is a plain read: `|` evaluates them all without a branch each.
        let not_dup = flag.data_acked | flag.win_update;
        let dubious = !not_dup
            | flag.data_sacked
            | flag.ece
            | flag.dsack
            | (self.tcp.ca_state != CaState::Open);
        let mut rexmit = Rexmit::None;
        if dubious {
            let num_dupack = u32::from(!flag.data_acked && !not_dup && !flag.dsack);
            self.fastretrans_alert(now, prior_snd_una, num_dupack, &mut flag, &mut rexmit, out);
        }

        // --- rate sample (tcp_rate_gen) and cwnd (tcp_cong_control)
        let delivered = (self.tcp.delivered - prior_delivered) as u32;
        let lost = (self.tcp.lost - prior_lost) as u32;
        self.rate_gen_clocks(now, delivered);
        // The full sample, the rate's part of `tcp_rate_gen` with it, built only for an
        // algorithm that reads it (not for Linux's `tcp_reno_cong_avoid`, which takes
        // `acked_sacked` alone); nothing the rate reads changes before it is built.
        let ece = flag.ece;
        let sample = |s: &Sender| {
            let mut rs = rs;
            s.rate_gen_sample(now, &mut rs);
            AckSample {
                ack_seq: ack,
                pkts_acked,
                acked_sacked: delivered,
                rtt_us: ca_rtt,
                prior_in_flight,
                delivered: rs.delivered,
                delivered_ce: rs.delivered_ce,
                interval_us: rs.interval_us.unwrap_or(0),
                prior_delivered: rs.prior_delivered,
                losses: lost,
                is_app_limited: rs.is_app_limited,
                is_retrans: rs.is_retrans,
                ece,
                ..AckSample::default()
            }
        };
        self.cong_control(now, &flag, delivered, lost, sample);

        if prior_packets == 0 {
            self.ack_probe(now, out); // `tcp_ack`'s no_queue
        }

        // --- transmit (tcp_xmit_recovery, tcp_data_snd_check)
        self.xmit_recovery(now, rexmit, out);
        self.write_xmit(now, out);
        #[cfg(debug_assertions)]
        self.verify_left_out(); // after every ACK: one pass over the scoreboard
        if self.tcp.packets_out == 0 && !self.probe_pending {
            self.rto_timer.clear();
            self.tlp_timer.clear();
            if self.all_sent() {
                self.conn = Conn::Closed;
            }
        }
    }

    /// `tcp_process_tlp_ack`, for an ACK at or above `tlp_high_seq` (rare: not inlined).
    #[inline(never)]
    fn process_tlp_ack(&mut self, now: SimTime, ack: u64, flag: &Flags) {
        if !self.tlp_retrans || flag.dsack_tlp {
            self.tlp_high_seq = 0;
        } else if ack > self.tlp_high_seq {
            // The probe repaired a real loss: reduce cwnd once (CWR).
            self.init_cwnd_reduction(now);
            self.set_state(now, CaState::Cwr);
            self.end_cwnd_reduction(now);
            self.try_keep_open(now);
        } else if !(flag.data_acked || flag.win_update || flag.data_sacked) {
            self.tlp_high_seq = 0;
        }
    }

    /// `tcp_clean_rtx_queue` segment by segment, for a cumulative ACK the batched path of
    /// `on_ack` does not take (retransmitted, SACKed or lost segments among those acked):
    /// segments acked, RTTs (µs) from the first and the last never-retransmitted one, and
    /// the lowest such sequence (`snd_nxt` if none).
    #[inline(never)]
    fn clean_rtx_queue_walk(
        &mut self,
        now: SimTime,
        new_head: u64,
        flag: &mut Flags,
        rs: &mut RateSample,
    ) -> (u32, Option<(u64, u64)>, u64) {
        let tcp = &mut self.tcp;
        let rack = &mut self.rack;
        let first_tx_mstamp = &mut self.first_tx_mstamp;
        let min_rtt = self.rtt.min_rtt_us();
        let sack = self.sack;
        let high_seq = self.high_seq;
        let snd_nxt = tcp.snd_nxt;
        let spurious_before = self.rcv_tsecr;
        let mut pkts_acked = 0u32;
        let mut acked_rtt = None;
        let mut acked_reord = snd_nxt;
        let mut first_ackt: Option<SimTime> = None;
        let mut last_ackt: Option<SimTime> = None;
        self.sb.pop_acked(new_head, |idx, (start, end), seg| {
            pkts_acked += 1;
            if seg.ever_retrans {
                if seg.retrans {
                    tcp.retrans_out -= 1;
                }
                flag.retrans_data_acked = true;
            } else if !seg.sacked {
                last_ackt = Some(seg.xmit);
                first_ackt.get_or_insert(seg.xmit);
                acked_reord = acked_reord.min(start);
                if end.min(snd_nxt) <= high_seq {
                    flag.orig_sack_acked = true;
                }
            }
            if seg.sacked {
                tcp.sacked_out -= 1;
            } else {
                if sack {
                    tcp.delivered += 1;
                    if flag.ece {
                        tcp.delivered_ce += 1;
                    }
                }
                rate_skb_delivered(rs, first_tx_mstamp, idx, &seg);
                // `tcp_skb_spurious_retrans`: an ACK echoing a TSval from before the
                // last retransmission was for an earlier copy; it does not advance RACK.
                let ts_xmit = seg.xmit.as_nanos() / 1_000_000 + 1;
                let spurious = seg.ever_retrans && spurious_before.is_some_and(|ecr| ecr < ts_xmit);
                if !spurious {
                    rack_advance(rack, idx, &seg, now, min_rtt);
                }
            }
            if seg.lost {
                tcp.lost_out -= 1;
            }
            tcp.packets_out -= 1;
        });
        // Karn per ACK (`tcp_clean_rtx_queue`): an ACK that also acknowledges retransmitted
        // data gives no sample from the cumulative ACK, not even from the original segments
        // it covers (the drill suite's `pacing-rate-after-recovery-*`: srtt stays 100 ms).
        if let (Some(f), Some(l), false) = (first_ackt, last_ackt, flag.retrans_data_acked) {
            acked_rtt = Some((
                now.saturating_since(f).as_micros(),
                now.saturating_since(l).as_micros(),
            ));
        }
        (pkts_acked, acked_rtt, acked_reord)
    }

    /// `tcp_ack`'s old_ack path: an ACK below snd_una with SACK blocks is tagged
    /// (`tcp_sacktag_write_queue`) and run through the loss state machine
    /// (`tcp_fastretrans_alert`, no duplicate counted), then what it frees is sent
    /// (`tcp_xmit_recovery`, and new data by `tcp_data_snd_check` after `tcp_ack`). No
    /// window update, RTT sample or cwnd change (`tcp_cong_control` is not reached).
    fn old_ack(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        let prior_snd_una = self.tcp.snd_una;
        let prior_fack = self.highest_sack_seq();
        let mut flag = Flags::default();
        let mut rs = RateSample::default();
        self.sacktag_write_queue(now, pkt, prior_snd_una, prior_fack, &mut flag, &mut rs);
        let mut rexmit = Rexmit::None;
        self.fastretrans_alert(now, prior_snd_una, 0, &mut flag, &mut rexmit, out);
        self.xmit_recovery(now, rexmit, out);
        self.write_xmit(now, out);
        #[cfg(debug_assertions)]
        self.verify_left_out();
    }

    /// `tcp_sacktag_write_queue` for an ACK carrying SACK blocks (kept out of `on_ack`, whose
    /// usual ACK has none): tags the newly SACKed segments, returns the transmission times
    /// of the first and the last never-retransmitted one, if any.
    #[inline(never)]
    fn sacktag_write_queue(
        &mut self,
        now: SimTime,
        pkt: &Packet,
        prior_snd_una: u64,
        prior_fack: u64,
        flag: &mut Flags,
        rs: &mut RateSample,
    ) -> Option<(SimTime, SimTime)> {
        let ack = pkt.ack;
        // `state->reord`: lowest sequence found delivered out of order on this ACK.
        let mut reord = self.tcp.snd_nxt;
        let mut first_sackt: Option<SimTime> = None;
        let mut last_sackt: Option<SimTime> = None;
        let blocks = pkt.sack_blocks();
        // RFC 2883: a first block below the cumulative ACK, or inside the second, is a DSACK.
        let dsack = self.check_dsack(blocks, ack, prior_snd_una, flag);
        for (bi, &(s, e)) in blocks.iter().enumerate() {
            if bi == 0 && dsack {
                // DSACKed segments still queued (`tcp_sacktag_one` with dup_sack): below
                // the new snd_una only within the episode (`tcp_is_sackblock_valid`).
                let valid = s >= ack || self.undo.marker.is_some_and(|m| e > m);
                if valid && e > prior_snd_una {
                    let (a, b) = (self.sb.idx_floor(s.max(prior_snd_una)), self.sb.idx_ceil(e));
                    if let Some(r) = self.dsack_tag(a, b) {
                        reord = reord.min(r);
                    }
                }
            }
            if e <= ack || s >= self.tcp.snd_nxt {
                continue;
            }
            // `tcp_match_skb_to_sack`: a segment (one MSS, `tcp_skb_pcount` 1) is SACKed
            // only when the block covers it whole; a block ending or starting inside one
            // (`sack 4000:4001` of `3001:4001`) marks nothing there.
            let a = self.sb.idx_ceil(s.max(ack));
            let b = self.sb.idx_floor(e.min(self.tcp.snd_nxt));
            let tcp = &mut self.tcp;
            let rack = &mut self.rack;
            let first_tx_mstamp = &mut self.first_tx_mstamp;
            let min_rtt = self.rtt.min_rtt_us();
            let high_seq = self.high_seq;
            let snd_nxt = tcp.snd_nxt;
            self.sb.sack(a, b, |idx, (start, end), seg| {
                flag.data_sacked = true;
                if seg.retrans {
                    seg.retrans = false;
                    tcp.retrans_out -= 1;
                } else if !seg.ever_retrans {
                    // A never-retransmitted segment in a hole below the highest SACK: reordering.
                    if start < prior_fack {
                        reord = reord.min(start);
                    }
                    if end.min(snd_nxt) <= high_seq {
                        flag.orig_sack_acked = true;
                    }
                    first_sackt.get_or_insert(seg.xmit);
                    last_sackt = Some(seg.xmit);
                }
                if seg.lost {
                    seg.lost = false;
                    tcp.lost_out -= 1;
                }
                seg.sacked = true;
                tcp.sacked_out += 1;
                tcp.delivered += 1;
                if flag.ece {
                    tcp.delivered_ce += 1;
                }
                rate_skb_delivered(rs, first_tx_mstamp, idx, seg);
                seg.delivered_mstamp = None; // sampled once
                rack_advance(rack, idx, seg, now, min_rtt);
            });
        }
        if self.tcp.ca_state != CaState::Loss || self.undo.marker.is_some() {
            self.check_sack_reordering(reord, false);
        }
        first_sackt.zip(last_sackt)
    }

    /// `tcp_verify_left_out` and more (debug builds): the counters agree with the scoreboard,
    /// recounted in one pass.
    #[cfg(debug_assertions)]
    pub(super) fn verify_left_out(&self) {
        let (mut lost, mut retrans, mut sacked) = (0u32, 0u32, 0u32);
        for s in self.sb.iter() {
            lost += u32::from(s.lost);
            retrans += u32::from(s.retrans);
            sacked += u32::from(s.sacked);
        }
        let t = &self.tcp;
        assert_eq!(t.packets_out as u64, self.sb.len(), "packets_out");
        assert_eq!(t.lost_out, lost, "lost_out");
        assert_eq!(t.retrans_out, retrans, "retrans_out");
        if self.sack {
            assert_eq!(t.sacked_out, sacked, "sacked_out");
        }
        assert!(
            t.sacked_out + t.lost_out <= t.packets_out,
            "left_out > packets_out"
        );
    }

    /// `tcp_may_raise_cwnd`: grow only on in-order delivery (RFC 5681), or on any delivery
    /// once reordering beyond the dupthresh was seen.
    pub(super) fn may_raise_cwnd(&self, flag: &Flags) -> bool {
        if self.reordering > REORDERING {
            return flag.data_acked || flag.data_sacked;
        }
        flag.data_acked
    }

    /// `tcp_cong_control`, for an ACK that newly delivered `acked_sacked` segments and marked
    /// `losses` lost; `sample` builds the whole sample for the algorithm's hooks.
    pub(super) fn cong_control(
        &mut self,
        now: SimTime,
        flag: &Flags,
        acked_sacked: u32,
        losses: u32,
        sample: impl FnOnce(&Sender) -> AckSample,
    ) {
        if self.has_cong_control() {
            let sample = sample(self);
            self.cc.on_cong_control(now, &mut self.tcp, &sample);
            return;
        }
        if self.in_cwnd_reduction() {
            let snd_una_advanced = flag.data_acked;
            self.cwnd_reduction(acked_sacked, losses, snd_una_advanced);
        } else if self.may_raise_cwnd(flag) {
            if self.reno_cong_avoid {
                satcc_cc::algos::reno::reno_cong_avoid(&mut self.tcp, acked_sacked);
            } else {
                let sample = sample(self);
                self.cc.on_cong_avoid(now, &mut self.tcp, &sample);
            }
            self.tcp.cwnd_stamp = now;
        }
        self.update_pacing_rate();
    }

    /// `tcp_update_pacing_rate`: 200 % of cwnd/srtt in slow start, 120 % after.
    pub(super) fn update_pacing_rate(&mut self) {
        let t = &mut self.tcp;
        let ratio = if t.cwnd < t.ssthresh / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let srtt = self.rtt.srtt_us();
        if srtt == 0 {
            return;
        }
        // mss · cwnd · ratio% per srtt µs, in bytes/s; in 64 bits unless that overflows
        // (a window of tens of millions of segments), then in 128 as the formula reads.
        let pkts = t.cwnd.max(t.packets_out) as u64;
        let rate = match (t.mss as u64)
            .checked_mul(pkts)
            .and_then(|b| b.checked_mul(ratio * PERCENT_OF_US_PER_S))
        {
            Some(bytes) => bytes / srtt,
            None => pacing_rate_u128(t.mss, pkts, ratio, srtt),
        };
        t.pacing_rate_bps = rate.min(t.max_pacing_rate_bps);
    }
}

/// `update_pacing_rate`'s rate when mss · cwnd · ratio% per second overflows 64 bits.
#[cold]
fn pacing_rate_u128(mss: u32, pkts: u64, ratio: u64, srtt: u64) -> u64 {
    let bytes = mss as u128 * pkts as u128 * ratio as u128 * 1_000_000 / 100;
    (bytes / srtt as u128) as u64
}

/// `tcp_rack_advance`: remember the most recently sent delivered segment.
fn rack_advance(rack: &mut Rack, idx: u64, seg: &Seg, now: SimTime, min_rtt_us: u64) {
    rack_advance_rtt(
        rack,
        idx,
        seg,
        now.saturating_since(seg.xmit).as_micros(),
        min_rtt_us,
    );
}

/// `rack_advance` given the segment's RTT (`now` − its transmission, µs).
#[inline(always)]
fn rack_advance_rtt(rack: &mut Rack, idx: u64, seg: &Seg, rtt_us: u64, min_rtt_us: u64) {
    // A retransmitted segment acked faster than min_rtt was probably the original's ACK.
    if seg.ever_retrans && rtt_us < min_rtt_us {
        return;
    }
    rack.advanced = true;
    rack.rtt_us = rtt_us;
    let newer = match rack.xmit {
        None => true,
        Some(t) => seg.xmit > t || (seg.xmit == t && idx + 1 > rack.end_idx),
    };
    if newer {
        rack.xmit = Some(seg.xmit);
        rack.end_idx = idx + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn a_cumulative_ack_frees_the_segments_and_takes_an_rfc6298_rtt_sample() {
        // `tcp_clean_rtx_queue`: 10 segments sent at 100 ms, all acknowledged at 150 ms:
        // srtt = 7/8 · 100 ms + 1/8 · 50 ms (RFC 6298 §2.3); slow start adds the 10 acked
        // segments to cwnd (`tcp_slow_start`) and the 20 now in flight are all new.
        let (mut s, _, _) = established();
        let out = deliver(&mut s, ms(150), &ack(10 * MSS, &[]));
        assert_eq!(s.srtt_us(), 93_750);
        assert_eq!(s.tcp.cwnd, 20);
        assert_eq!(s.tcp.packets_out, 20);
        assert_eq!(sent(&out).len(), 20);
    }

    /// What an ACK can change in a sender, as text to compare two of them.
    fn snapshot(s: &Sender) -> String {
        format!(
            "{:?}",
            (
                (
                    &s.tcp,
                    s.rack,
                    s.first_tx_mstamp,
                    &s.rtt,
                    &s.stats,
                    s.acked_all_at
                ),
                (
                    s.sb.head,
                    s.sb.iter().collect::<Vec<_>>(),
                    s.sb.tsorted_entries(),
                    s.sb.retransmit_hint
                ),
                (s.sb.highest_sacked(), s.rto_timer, s.tlp_timer, s.reo_timer),
                (
                    s.high_seq,
                    s.reordering,
                    s.reord_seen,
                    s.tlp_high_seq,
                    s.backoff
                ),
                (s.prr_delivered, s.prr_out, s.undo.marker, s.undo.retrans),
            )
        )
    }

    #[test]
    fn in_order_cumulative_acks_leave_the_sender_as_the_per_segment_walk_leaves_it() {
        // The batched `tcp_clean_rtx_queue` against the per-segment one (`fast_ack` off):
        // delayed ACKs of two segments and single ones in slow start, then segment 31 lost
        // (three SACKed duplicates, Recovery, its retransmission), the ACK past it, and
        // in-order ACKs again inside Recovery once the retransmission is below snd_una.
        let (mut fast, _, _) = established();
        let (mut slow, _, _) = established();
        slow.fast_ack = false;
        let mut acks: Vec<Packet> = (1..=15).map(|k| ack(2 * k * MSS, &[])).collect();
        acks.push(ack(31 * MSS, &[]));
        for b in 33..=35 {
            acks.push(ack(31 * MSS, &[(32, b)]));
        }
        acks.push(ack(36 * MSS, &[]));
        for n in [38, 39, 41, 43, 44, 46] {
            acks.push(ack(n * MSS, &[]));
        }
        for (i, a) in acks.iter().enumerate() {
            let at = ms(150 + 3 * i as u64);
            let (of, os) = (deliver(&mut fast, at, a), deliver(&mut slow, at, a));
            assert_eq!(of.pkts, os.pkts, "sent after ACK {i}");
            assert_eq!(of.timers, os.timers, "timers after ACK {i}");
            assert_eq!(snapshot(&fast), snapshot(&slow), "state after ACK {i}");
        }
        assert_eq!(fast.stats.recovery_count, 1);
        assert_eq!(fast.stats.retransmitted_packets, 1);
        assert_eq!(fast.tcp.snd_una, 46 * MSS);
    }

    #[test]
    fn an_ack_below_snd_una_still_tags_its_sack_blocks() {
        // `tcp_ack`'s old_ack (upstream fast_recovery/prr-ss-ack-below-snd_una-cubic): a
        // reordered ACK of 2 segments arriving after the ACK of 4 still SACKs segment 6,
        // and the segment it takes out of flight lets one new one go (`tcp_data_snd_check`).
        let (mut s, _, _) = established();
        deliver(&mut s, ms(150), &ack(4 * MSS, &[]));
        let next = s.tcp.snd_nxt / MSS;
        let out = deliver(&mut s, ms(151), &ack(2 * MSS, &[(6, 7)]));
        assert_eq!(s.tcp.snd_una, 4 * MSS);
        assert_eq!(s.tcp.sacked_out, 1);
        assert_eq!(sent(&out), vec![(next, false)]);
    }

    #[test]
    fn a_sack_block_marks_only_the_segments_it_covers_whole() {
        // `tcp_match_skb_to_sack` (upstream fast_retransmit/fr-4pkt-fack-last-byte): a block
        // of the last byte of segment 3 marks nothing; one of segment 5 whole and one byte
        // of each neighbour marks segment 5 only.
        let (mut s, _, _) = established();
        let mut p = ack(0, &[]);
        p.sack[0] = (4 * MSS - 1, 4 * MSS);
        p.nsack = 1;
        deliver(&mut s, ms(150), &p);
        assert_eq!(s.tcp.sacked_out, 0);
        assert_eq!(s.sb.highest_sacked(), None);
        p.sack[0] = (5 * MSS - 1, 6 * MSS + 1);
        deliver(&mut s, ms(151), &p);
        assert_eq!(s.tcp.sacked_out, 1);
        assert_eq!(s.sb.highest_sacked(), Some(6));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "sacked_out")]
    fn the_debug_counter_check_catches_a_counter_that_disagrees_with_the_scoreboard() {
        let (mut s, _, _) = established();
        s.tcp.sacked_out += 1; // a bookkeeping slip: the next ACK must stop the run
        deliver(&mut s, ms(150), &ack(MSS, &[]));
    }

    #[test]
    fn sack_blocks_mark_their_segments_sacked_and_count_them() {
        // `tcp_sacktag_write_queue`: a duplicate ACK with segments 2..5 SACKed
        let (mut s, _, _) = established();
        deliver(&mut s, ms(150), &ack(0, &[(2, 5)]));
        assert_eq!(s.tcp.sacked_out, 3);
        assert_eq!(s.tcp.packets_out, 10);
    }

    #[test]
    fn an_ack_of_a_retransmitted_segment_gives_no_rtt_sample() {
        // Karn's rule (RFC 6298 §3): after an RTO retransmits segment 0, its ACK (no
        // timestamp echo) must not be timed.
        let (mut s, out, _) = established();
        let (at, o) = run_timers_until_retransmission(&mut s, &out);
        assert_eq!(sent(&o).first(), Some(&(0, true)));
        let before = s.srtt_us();
        deliver(&mut s, at + SimDuration::from_millis(5), &ack(MSS, &[]));
        assert_eq!(s.srtt_us(), before);
    }
}
