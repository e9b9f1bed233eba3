//! The scenario's switches (true/false keys whose file form is their resolved form), each
//! declared once, here: its name, its default and what it means. [`flow_switches!`] lists a
//! `[[flow]]`'s, [`scenario_switches!`] the `[scenario]` table's; [`switch_fields!`] writes
//! them into the file's table (`file::FlowT`, `file::Section`) and the resolved form
//! ([`super::Flow`], [`super::Scenario`]), the copy from one to the other
//! (`file::File::scenario`) and the defaults of a scenario built in code (`build`).
//!
//! Adding a switch is one entry here, its check in `file::check` if it has one, and its row
//! in docs/scenario.md; `#[serde(default)]` keeps a resolved scenario written without it
//! readable, and a new switch left at its default is left out of the resolved form (`, kept`
//! marks the older switches, always written, so the hash of a resolved scenario is unchanged).

/// The `[[flow]]` switches, handed to `$m!` after `$args` (see the module's doc).
macro_rules! flow_switches {
    ($m:ident!($($args:tt)*)) => {
        $m! {
            $($args)*;
            /// SACK (RFC 2018, `net.ipv4.tcp_sack`).
            sack = true, kept;
            /// TCP timestamps (RFC 7323, `net.ipv4.tcp_timestamps`).
            timestamps = true, kept;
            /// Window scaling (RFC 7323, `net.ipv4.tcp_window_scaling`).
            window_scaling = true, kept;
            /// The receive buffer grows with the sender's rate up to `rwnd` (Linux's DRS,
            /// `net.ipv4.tcp_moderate_rcvbuf`); false: a fixed window of `rwnd`.
            rcvbuf_autotune = true, kept;
            /// ECN negotiated (`net.ipv4.tcp_ecn = 1`).
            ecn = false, kept;
            /// Delayed ACKs (RFC 1122; Linux's quick-ack mode at the start).
            delayed_ack = true, kept;
            /// Linux's metrics cache (`tcp_no_metrics_save = 0`): a limited transfer stores its
            /// ssthresh when fully acknowledged (`tcp_update_metrics`) and a later
            /// `metrics_save` flow between the same two nodes starts with it
            /// (`tcp_init_metrics`).
            metrics_save = false, kept;
            /// `net.ipv4.tcp_slow_start_after_idle`: it acts on application writes after
            /// idle, so only flows with an `app` other than bulk see it.
            slow_start_after_idle = true;
            /// `TCP_NODELAY` on the sending socket (false: Nagle on, Linux's default).
            nodelay = false;
        }
    };
}

/// The `[scenario]` switches, handed to `$m!` after `$args` (see the module's doc).
macro_rules! scenario_switches {
    ($m:ident!($($args:tt)*)) => {
        $m! {
            $($args)*;
            /// Record every TCP flow's congestion-control state per bin (`record::CcSeries`;
            /// the result's `cc_series`).
            cc_state = false;
        }
    };
}

/// What the switch lists are made into:
/// - `struct file|resolved ITEM`: the struct `ITEM` with every switch appended to its
///   fields, as a file reads it (`file`: always written, for the read file's view) or as
///   the resolved form carries it (`resolved`);
/// - `copy SRC => NAME { FIELDS }`: the struct literal `NAME { FIELDS }` with every switch
///   taken from `SRC`;
/// - `defaults NAME { FIELDS }`: the same with every switch at its default.
macro_rules! switch_fields {
    (struct $mode:ident $(#[$a:meta])* $v:vis struct $n:ident { $($body:tt)* };
     $($list:tt)*) => {
        switch_fields!(@field $mode [$(#[$a])* $v struct $n] [$($body)*] $($list)*);
    };
    (@field $mode:ident [$($head:tt)*] [$($acc:tt)*]) => {
        $($head)* { $($acc)* }
    };
    (@field file $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = true $(, $kept:ident)?;
     $($rest:tt)*) => {
        switch_fields!(@field file $h [$($acc)*
            $(#[$d])* #[serde(default = "crate::scenario::switches::yes")] pub $k: bool,
        ] $($rest)*);
    };
    (@field file $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = false $(, $kept:ident)?;
     $($rest:tt)*) => {
        switch_fields!(@field file $h [$($acc)*
            $(#[$d])* #[serde(default)] pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = true, kept;
     $($rest:tt)*) => {
        switch_fields!(@field resolved $h [$($acc)*
            $(#[$d])* #[serde(default = "crate::scenario::switches::yes")] pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = true;
     $($rest:tt)*) => {
        switch_fields!(@field resolved $h [$($acc)*
            $(#[$d])*
            #[serde(
                default = "crate::scenario::switches::yes",
                skip_serializing_if = "crate::scenario::switches::is_true"
            )]
            pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = false, kept;
     $($rest:tt)*) => {
        switch_fields!(@field resolved $h [$($acc)*
            $(#[$d])* #[serde(default)] pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = false;
     $($rest:tt)*) => {
        switch_fields!(@field resolved $h [$($acc)*
            $(#[$d])*
            #[serde(default, skip_serializing_if = "crate::scenario::switches::is_false")]
            pub $k: bool,
        ] $($rest)*);
    };
    (copy $src:ident => $n:ident { $($body:tt)* };
     $($(#[$d:meta])* $k:ident = $default:literal $(, $kept:ident)?;)*) => {
        $n { $($body)* $($k: $src.$k,)* }
    };
    (defaults $n:ident { $($body:tt)* };
     $($(#[$d:meta])* $k:ident = $default:literal $(, $kept:ident)?;)*) => {
        $n { $($body)* $($k: $default,)* }
    };
}

pub(crate) fn yes() -> bool {
    true
}

pub(crate) fn is_true(b: &bool) -> bool {
    *b
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}
