//! The scenario's keys whose file form is their resolved form, each declared once, here: its
//! name, its type, its default and what it means. They are true/false switches (`sack = true`)
//! and keys with a unit (`min_rto: Nanos = ...`: a duration, rate, size, packet count,
//! probability or queue limit, `file`'s unit types). [`flow_switches!`] lists a `[[flow]]`'s,
//! [`scenario_switches!`] the `[scenario]` table's; [`switch_fields!`] writes them into the
//! file's table (`file::FlowT`, `file::Section`) and the resolved form ([`super::Flow`],
//! [`super::Scenario`]), the copy from one to the other (`file::File::scenario`: the same
//! value, no conversion) and the defaults of a scenario built in code (`build`).
//! [`link_keys!`] lists the `[[link]]` keys of one direction, each with its b→a twin
//! (`jitter / jitter_ba`); [`link_fields!`] writes both into the file's `file::LinkT`, one
//! field into the resolved direction (`dirspec::Direction`), the copy into the two directions
//! (b→a: the twin, else the key), `Direction::new`'s defaults and the pair a check names
//! ([`Twin`]).
//!
//! Adding such a key is one entry here, its check in `file::check` if its type does not say
//! it all, and its row in docs/scenario.md. A key with a unit is a [`Key`] in both forms: read
//! in the file by its unit's grammar ("600 ms"), written and read back in the resolved form in
//! base units (ns, bit/s, bytes: the unit type's serde form), its default carried by a marker
//! type named after it (module `flow` or `scenario`), so serde, the editors' JSON Schema and
//! `Flow::bulk` all take it from the entry. `#[serde(default)]` keeps a resolved scenario
//! written without a new key readable, and a new key left at its default is left out of the
//! resolved form (`, kept` marks the older keys, always written, so the hash of a resolved
//! scenario is unchanged; `as "WIRE"` keeps an older key's resolved name, `min_rto_ns`).

use serde::{Deserialize, Serialize};

use super::file::{Bps, Bytes, Nanos, Pkts, Ppm, Prob, Queue};
use super::DEFAULT_MIN_RTO_NS;
use crate::dirspec::{QueueDrop, QueueSpec};

/// The `[[flow]]` keys, handed to `$m!` after `$args` (see the module's doc).
macro_rules! flow_switches {
    ($m:ident!($($args:tt)*)) => {
        $m! {
            $($args)*;
            in flow;
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
            /// The floor of the retransmission timeout (Linux `TCP_RTO_MIN`, the `rto_min`
            /// route attribute); written `min_rto_ns` in the resolved form.
            min_rto as "min_rto_ns": Nanos = Nanos(DEFAULT_MIN_RTO_NS), kept;
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
            /// The simulator's unpaced sender holds a small cwnd room for a larger GSO packet
            /// as Linux's `tcp_tso_should_defer` does (the kernel always does, GSO being on
            /// for every TCP socket), and marks each GSO packet's last segment PSH; false: the
            /// sender sends whatever room it has at once (satcc before 2026-11-30). On since
            /// the fidelity grid's paired runs (docs/fidelity.md). The emulator ignores it.
            tso_defer = true;
        }
    };
}

/// The `[scenario]` keys, handed to `$m!` after `$args` (see the module's doc).
macro_rules! scenario_switches {
    ($m:ident!($($args:tt)*)) => {
        $m! {
            $($args)*;
            in scenario;
            /// Record every TCP flow's congestion-control state per bin (`record::CcSeries`;
            /// the result's `cc_series`).
            cc_state = false;
        }
    };
}

/// The `[[link]]` keys of one direction, handed to `$m!` after `$args` (see [`link_fields!`]).
/// Each entry names the key and its b→a twin (`NAME / NAME_ba`, the twin defaulting to the
/// key): the file's table holds both, the resolved form one per direction
/// ([`crate::dirspec::Direction`]).
macro_rules! link_keys {
    ($m:ident!($($args:tt)*)) => {
        $m! {
            $($args)*;
            in link;
            /// Which packet the full queue drops: "tail" (absent: the default) or "front".
            drop / drop_ba: QueueDrop = QueueDrop::Tail;
            /// The CE marking threshold, packets queued (a DCTCP-style step); none: no marking.
            ecn_threshold / ecn_threshold_ba as "ecn_threshold_pkts": Option<Pkts> = None, kept;
            /// Uniform extra one-way delay per packet, drawn in [0, jitter); 0: none.
            jitter / jitter_ba as "jitter_ns": Nanos = Nanos(0);
            /// The serialiser's clock offset from nominal, ppm (signed): the direction sends at
            /// rate × (1 + clock / 10⁶), as a real NIC's oscillator does within its tolerance;
            /// 0: the nominal rate. Constant links only (a model sets its own rates).
            clock / clock_ba as "clock_ppm": Ppm = Ppm(0.0);
        }
    };
}
pub(crate) use link_keys;

/// What the `[[link]]` key list is made into (entries as [`switch_fields!`]'s keys with a
/// unit, each with its b→a twin: `NAME / NAME_ba [as "WIRE"]: UNIT = DEFAULT [, kept]`):
/// - `struct file ITEM`: the file's table with both keys of every entry appended, each an
///   `Option<Key<_>>` (absent: not written);
/// - `struct resolved ITEM`: a direction of the resolved form with every key appended, as
///   [`switch_fields!`] writes a key with a unit;
/// - `copy SRC => AB, BA`: statements setting each key of the directions `AB` and `BA` from the
///   file's table `SRC` (b→a: the twin, else the key; absent: the default);
/// - `defaults NAME { FIELDS }`: the struct literal with every key at its default;
/// - `twins ITEM`: [`Twin`] for each key, the pair (name, value) of both directions, for checks;
/// - `markers`: the module `link` of the keys' markers ([`Declared`]).
macro_rules! link_fields {
    (struct file $(#[$a:meta])* $v:vis struct $n:ident { $($body:tt)* }; in $list:ident;
     $($(#[$d:meta])* $k:ident / $ba:ident $(as $wire:literal)?: $t:ty = $default:expr
       $(, $kept:ident)?;)*) => {
        $(#[$a])* $v struct $n {
            $($body)*
            $(
                $(#[$d])*
                #[serde(default, deserialize_with = "crate::scenario::switches::read_some")]
                pub $k: Option<crate::scenario::switches::Key<crate::scenario::switches::$list::$k>>,
                #[doc = concat!("`", stringify!($k), "` of the b→a direction (absent: a→b's).")]
                #[serde(default, deserialize_with = "crate::scenario::switches::read_some")]
                pub $ba: Option<crate::scenario::switches::Key<crate::scenario::switches::$list::$k>>,
            )*
        }
    };
    (struct resolved $(#[$a:meta])* $v:vis struct $n:ident { $($body:tt)* }; in $list:ident;
     $($(#[$d:meta])* $k:ident / $ba:ident $(as $wire:literal)?: $t:ty = $default:expr
       $(, $kept:ident)?;)*) => {
        $crate::scenario::switches::switch_fields!(struct resolved
            $(#[$a])* $v struct $n { $($body)* }; in $list;
            $($(#[$d])* $k $(as $wire)?: $t = $default $(, $kept)?;)*);
    };
    (copy $src:ident => $ab:ident, $bad:ident; in $list:ident;
     $($(#[$d:meta])* $k:ident / $ba:ident $(as $wire:literal)?: $t:ty = $default:expr
       $(, $kept:ident)?;)*) => {
        $(
            $ab.$k = $src.$k.unwrap_or_default();
            $bad.$k = $src.$ba.or($src.$k).unwrap_or_default();
        )*
    };
    (defaults $n:ident { $($body:tt)* }; in $list:ident;
     $($(#[$d:meta])* $k:ident / $ba:ident $(as $wire:literal)?: $t:ty = $default:expr
       $(, $kept:ident)?;)*) => {
        $n { $($body)* $($k: crate::scenario::switches::Key::default(),)* }
    };
    (twins $n:ident; in $list:ident;
     $($(#[$d:meta])* $k:ident / $ba:ident $(as $wire:literal)?: $t:ty = $default:expr
       $(, $kept:ident)?;)*) => {
        $(impl crate::scenario::switches::Twin<crate::scenario::switches::$list::$k> for $n {
            fn pair(
                &self,
            ) -> [(&'static str, Option<crate::scenario::switches::Key<crate::scenario::switches::$list::$k>>); 2] {
                [(stringify!($k), self.$k), (stringify!($ba), self.$ba)]
            }
        })*

        impl $n {
            /// A key of the list in both directions, named: `[(NAME, a→b), (NAME_ba, b→a)]`.
            pub fn twin<K: crate::scenario::switches::Declared>(
                &self,
            ) -> [(&'static str, Option<crate::scenario::switches::Key<K>>); 2]
            where
                Self: crate::scenario::switches::Twin<K>,
            {
                crate::scenario::switches::Twin::<K>::pair(self)
            }
        }
    };
    (markers; in $list:ident;
     $($(#[$d:meta])* $k:ident / $ba:ident $(as $wire:literal)?: $t:ty = $default:expr
       $(, $kept:ident)?;)*) => {
        $crate::scenario::switches::switch_fields!(markers; in $list;
            $($(#[$d])* $k $(as $wire)?: $t = $default $(, $kept)?;)*);
    };
}
pub(crate) use link_fields;

/// What the key lists are made into:
/// - `struct file|resolved ITEM`: the struct `ITEM` with every key appended to its fields,
///   as a file reads it (`file`: always written, for the read file's view) or as the resolved
///   form carries it (`resolved`);
/// - `copy SRC => NAME { FIELDS }`: the struct literal `NAME { FIELDS }` with every key taken
///   from `SRC` (a key's file form is its resolved form: no conversion);
/// - `defaults NAME { FIELDS }`: the same with every key at its default;
/// - `markers`: the module (`flow`, `scenario`) of the keys' markers: per key with a unit an
///   uninhabited type named after it that carries its type and default ([`Declared`]).
///
/// An entry is `NAME = true|false` (a switch) or `NAME: UNIT = DEFAULT` (a key with a unit,
/// [`Unit`]: read as the file writes it, held as that value, written in base units);
/// `NAME as "WIRE": ...` names it `WIRE` in the resolved form; `, kept` marks a key always
/// written in the resolved form (the older keys: the hash of a resolved scenario is
/// unchanged), else a key at its default is left out.
macro_rules! switch_fields {
    (struct $mode:ident $(#[$a:meta])* $v:vis struct $n:ident { $($body:tt)* };
     in $list:ident; $($entries:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field $mode $list [$(#[$a])* $v struct $n] [$($body)*] $($entries)*);
    };
    (@field $mode:ident $list:ident [$($head:tt)*] [$($acc:tt)*]) => {
        $($head)* { $($acc)* }
    };
    (@field file $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = true $(, $kept:ident)?;
     $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field file $list $h [$($acc)*
            $(#[$d])* #[serde(default = "crate::scenario::switches::yes")] pub $k: bool,
        ] $($rest)*);
    };
    (@field file $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = false $(, $kept:ident)?;
     $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field file $list $h [$($acc)*
            $(#[$d])* #[serde(default)] pub $k: bool,
        ] $($rest)*);
    };
    (@field file $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident $(as $wire:literal)?:
     $t:ty = $default:expr $(, $kept:ident)?; $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field file $list $h [$($acc)*
            $(#[$d])*
            #[serde(default, deserialize_with = "crate::scenario::switches::read")]
            pub $k: crate::scenario::switches::Key<crate::scenario::switches::$list::$k>,
        ] $($rest)*);
    };
    (@field resolved $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = true, kept;
     $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field resolved $list $h [$($acc)*
            $(#[$d])* #[serde(default = "crate::scenario::switches::yes")] pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = true;
     $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field resolved $list $h [$($acc)*
            $(#[$d])*
            #[serde(
                default = "crate::scenario::switches::yes",
                skip_serializing_if = "crate::scenario::switches::is_true"
            )]
            pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = false, kept;
     $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field resolved $list $h [$($acc)*
            $(#[$d])* #[serde(default)] pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident = false;
     $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field resolved $list $h [$($acc)*
            $(#[$d])*
            #[serde(default, skip_serializing_if = "crate::scenario::switches::is_false")]
            pub $k: bool,
        ] $($rest)*);
    };
    (@field resolved $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident $(as $wire:literal)?:
     $t:ty = $default:expr, kept; $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field resolved $list $h [$($acc)*
            $(#[$d])* #[serde(default $(, rename = $wire)?)]
            pub $k: crate::scenario::switches::Key<crate::scenario::switches::$list::$k>,
        ] $($rest)*);
    };
    (@field resolved $list:ident $h:tt [$($acc:tt)*] $(#[$d:meta])* $k:ident $(as $wire:literal)?:
     $t:ty = $default:expr; $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@field resolved $list $h [$($acc)*
            $(#[$d])*
            #[serde(
                default,
                skip_serializing_if = "crate::scenario::switches::Key::is_default"
                $(, rename = $wire)?
            )]
            pub $k: crate::scenario::switches::Key<crate::scenario::switches::$list::$k>,
        ] $($rest)*);
    };
    (copy $src:ident => $n:ident { $($body:tt)* }; in $list:ident;
     $($(#[$d:meta])* $k:ident $(as $wire:literal)? $(: $t:ty)? = $default:expr
       $(, $kept:ident)?;)*) => {
        $n { $($body)* $($k: $src.$k,)* }
    };
    (defaults $n:ident { $($body:tt)* }; in $list:ident;
     $($(#[$d:meta])* $k:ident $(as $wire:literal)? $(: $t:ty)? = $default:expr
       $(, $kept:ident)?;)*) => {
        $n { $($body)* $($k: $crate::scenario::switches::switch_fields!(@default $($t)? = $default),)* }
    };
    (@default = $default:expr) => {
        $default
    };
    (@default $t:ty = $default:expr) => {
        crate::scenario::switches::Key::default()
    };
    (markers; in $list:ident; $($entries:tt)*) => {
        /// The markers of this list's keys with a unit (see [`switch_fields!`]).
        pub mod $list {
            #[allow(unused_imports)]
            use super::*;
            $crate::scenario::switches::switch_fields!(@marker $($entries)*);
        }
    };
    (@marker) => {};
    (@marker $(#[$d:meta])* $k:ident = $default:literal $(, $kept:ident)?; $($rest:tt)*) => {
        $crate::scenario::switches::switch_fields!(@marker $($rest)*);
    };
    (@marker $(#[$d:meta])* $k:ident $(as $wire:literal)?: $t:ty = $default:expr
     $(, $kept:ident)?; $($rest:tt)*) => {
        $(#[$d])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum $k {}

        impl super::Declared for $k {
            type T = $t;
            fn default() -> $t {
                $default
            }
        }
        $crate::scenario::switches::switch_fields!(@marker $($rest)*);
    };
}

pub(crate) use switch_fields;

flow_switches!(switch_fields!(markers));
scenario_switches!(switch_fields!(markers));
link_keys!(link_fields!(markers));

/// A `[[link]]` key of [`link_keys!`] in both directions, as the file's table holds them:
/// `[(NAME, a→b), (NAME_ba, b→a)]`, so a check names each key it refuses.
pub trait Twin<K: Declared> {
    fn pair(&self) -> [(&'static str, Option<Key<K>>); 2];
}

/// A key with a unit, declared in a list above: its value's type and its default (the
/// marker types of `flow` and `scenario` implement it).
pub trait Declared: 'static {
    type T: Unit;
    fn default() -> Self::T;
}

/// A value with a unit: its `Deserialize` reads the file's grammar ("600 ms", "20 Mbit/s",
/// `units.rs`); `Serialize` writes it in base units (ns, bit/s, bytes, a `QueueSpec`), which
/// is how the resolved form is read back ([`Unit::from_base`]).
pub trait Unit:
    Copy + PartialEq + std::fmt::Debug + Serialize + for<'de> Deserialize<'de> + schemars::JsonSchema
{
    type Base: for<'de> Deserialize<'de>;
    fn from_base(b: Self::Base) -> Self;
}

macro_rules! units {
    ($($t:ident($base:ty)),*) => {
        $(impl Unit for $t {
            type Base = $base;
            fn from_base(b: $base) -> $t {
                $t(b)
            }
        })*
    };
}
units!(
    Nanos(u64),
    Bps(u64),
    Bytes(u64),
    Pkts(u64),
    Prob(f64),
    Ppm(f64),
    Queue(QueueSpec)
);

/// Which packet a full queue drops: the same words in both forms.
impl Unit for QueueDrop {
    type Base = QueueDrop;
    fn from_base(b: QueueDrop) -> QueueDrop {
        b
    }
}

/// A key that may be absent (`ecn_threshold`): `null` in the resolved form.
impl<T: Unit> Unit for Option<T> {
    type Base = Option<T::Base>;
    fn from_base(b: Option<T::Base>) -> Self {
        b.map(T::from_base)
    }
}

/// A key with a unit as both the file's table and the resolved scenario hold it: the same
/// value (`K::T`), read from the file's text by [`read`] and from the resolved form's base
/// units by its `Deserialize`; its `Default` is the key's.
pub struct Key<K: Declared>(pub K::T);

impl<K: Declared> Key<K> {
    pub fn new(v: K::T) -> Self {
        Key(v)
    }
    pub fn get(&self) -> K::T {
        self.0
    }
    /// At the key's default (left out of the resolved form unless `kept`).
    pub fn is_default(&self) -> bool {
        self.0 == K::default()
    }
}

impl<K: Declared> Default for Key<K> {
    fn default() -> Self {
        Key(K::default())
    }
}

impl<K: Declared> Clone for Key<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: Declared> Copy for Key<K> {}

impl<K: Declared> PartialEq for Key<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K: Declared> std::fmt::Debug for Key<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<K: Declared> Serialize for Key<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// The resolved form: base units.
impl<'de, K: Declared> Deserialize<'de> for Key<K> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <K::T as Unit>::Base::deserialize(d).map(|b| Key(K::T::from_base(b)))
    }
}

/// The file's form: the unit's grammar (the `deserialize_with` of a file table's key).
pub(crate) fn read<'de, D: serde::Deserializer<'de>, K: Declared>(
    d: D,
) -> Result<Key<K>, D::Error> {
    K::T::deserialize(d).map(Key)
}

/// [`read`] of a key the table may leave out (a `[[link]]` key: absent, the direction takes
/// its twin's or the default).
pub(crate) fn read_some<'de, D: serde::Deserializer<'de>, K: Declared>(
    d: D,
) -> Result<Option<Key<K>>, D::Error> {
    read(d).map(Some)
}

impl<K: Declared> schemars::JsonSchema for Key<K> {
    fn schema_name() -> String {
        K::T::schema_name()
    }
    fn json_schema(g: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        K::T::json_schema(g)
    }
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
