//! Application traffic (the resolved flow's `app`, `satcc_core::scenario::App`): a bulk flow has all its data from the start. An
//! on/off flow starts "on" (writing whatever the connection takes, as bulk) and an `App`
//! event at each switch stops the writes (`Sender::app_stop`) or resumes them
//! (`Sender::app_unlimited`); a request flow's `App` events each write `bytes`
//! (`Sender::app_write`). Writes after idle go through `tcp_slow_start_after_idle_check`
//! when the flow's `slow_start_after_idle` is on. Bulk flows schedule no `App` event, so
//! their runs are unchanged.

use satcc_core::{SimDuration, SimTime};

use super::{Ev, World};
use crate::capture::Tap;
use crate::tcp::sender::Sender;
use crate::tcp::Out;
use satcc_core::scenario::App;

/// A non-bulk application and how many of its events have run.
pub(super) struct AppRun {
    pub(super) app: App,
    pub(super) step: usize,
}

impl AppRun {
    /// The first event's offset from the flow's start.
    pub(super) fn first(&self) -> Option<SimDuration> {
        match &self.app {
            App::Bulk => None,
            App::Onoff { on_ns, .. } => Some(SimDuration::from_nanos(*on_ns)),
            App::Requests {
                every_ns: Some(_), ..
            } => Some(SimDuration::ZERO),
            App::Requests { at_ns, .. } => at_ns.first().map(|&t| SimDuration::from_nanos(t)),
        }
    }

    /// Run event `step` at `now` on `sender`; the time of the next one.
    fn fire(&mut self, now: SimTime, sender: &mut Sender, out: &mut Out) -> Option<SimTime> {
        let step = self.step;
        self.step += 1;
        match &self.app {
            App::Bulk => None,
            App::Onoff { on_ns, off_ns } => {
                if step.is_multiple_of(2) {
                    sender.app_stop();
                    Some(now + SimDuration::from_nanos(*off_ns))
                } else {
                    sender.app_unlimited(now, out);
                    Some(now + SimDuration::from_nanos(*on_ns))
                }
            }
            App::Requests {
                bytes,
                every_ns: Some(every),
                ..
            } => {
                sender.app_write(now, *bytes, out);
                Some(now + SimDuration::from_nanos(*every))
            }
            App::Requests { bytes, at_ns, .. } => {
                sender.app_write(now, *bytes, out);
                at_ns
                    .get(step + 1)
                    .map(|&d| sender.start + SimDuration::from_nanos(d))
            }
        }
    }
}

impl<T: Tap> World<T> {
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
