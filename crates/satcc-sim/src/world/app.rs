//! Application traffic (`FlowConfig::app`): a bulk flow has all its data from the start. An
//! on/off flow starts "on" (writing whatever the connection takes, as bulk) and an `App`
//! event at each switch stops the writes (`Sender::app_stop`) or resumes them
//! (`Sender::app_unlimited`); a request flow's `App` events each write `bytes`
//! (`Sender::app_write`). Writes after idle go through `tcp_slow_start_after_idle_check`
//! when the flow's `slow_start_after_idle` is on. Bulk flows schedule no `App` event, so
//! their runs are unchanged.

use satcc_core::{SimDuration, SimTime};

use super::{Ev, World};
use crate::config::AppConfig;
use crate::tcp::sender::Sender;
use crate::tcp::Out;

/// A non-bulk application and how many of its events have run.
pub(super) struct AppRun {
    pub(super) cfg: AppConfig,
    pub(super) step: usize,
}

impl AppRun {
    /// The first event's offset from the flow's start.
    pub(super) fn first(&self) -> Option<SimDuration> {
        match &self.cfg {
            AppConfig::Bulk => None,
            AppConfig::OnOff { on, .. } => Some(*on),
            AppConfig::Periodic { .. } => Some(SimDuration::ZERO),
            AppConfig::At { at, .. } => at.first().copied(),
        }
    }

    /// Run event `step` at `now` on `sender`; the time of the next one.
    fn fire(&mut self, now: SimTime, sender: &mut Sender, out: &mut Out) -> Option<SimTime> {
        let step = self.step;
        self.step += 1;
        match &self.cfg {
            AppConfig::Bulk => None,
            AppConfig::OnOff { on, off } => {
                if step.is_multiple_of(2) {
                    sender.app_stop();
                    Some(now + *off)
                } else {
                    sender.app_unlimited(now, out);
                    Some(now + *on)
                }
            }
            AppConfig::Periodic { bytes, every } => {
                sender.app_write(now, *bytes, out);
                Some(now + *every)
            }
            AppConfig::At { bytes, at } => {
                sender.app_write(now, *bytes, out);
                at.get(step + 1).map(|&d| sender.start + d)
            }
        }
    }
}

impl World {
    /// A flow's application writes or switches (rare: kept out of the event loop's body).
    #[cold]
    #[inline(never)]
    pub(super) fn app_event(&mut self, f: u32, out: &mut Out) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let app = flow
            .app
            .as_mut()
            .expect("App events come from an application");
        let next = app.fire(now, &mut flow.sender, out);
        self.emit(f, true, out);
        if let Some(at) = next.filter(|&at| at <= self.end) {
            self.schedule(at, Ev::App(f));
        }
    }
}
