//! Every option is declared once (ARCHITECTURE.md §7): each options type is written as one
//! table, `options_table!`, whose rows give an option's key, type, default, doc, help
//! heading, value name, the methods that use it where that is not every method of the type,
//! and the rules under which it has no effect. From that one table come the struct (its serde
//! keys are the command line's flags with `_` for `-`, a ladder entry's keys and Python's
//! keyword arguments), its `Default`, its rows ([`Table::rows`]: the command line's flags, the
//! help, docs/cli.md's table and Python's defaults are built from them) and its idle rules
//! ([`Table::idle`]).
//!
//! The options types are `solve::RunOptions` (the run's own), `batch::MapOptions` (every
//! map's, flattened into the next two), `f1::F1Options`, `dc::DcOptions`,
//! `search::scan::ScanSolveOptions`, `search::backtrack::BacktrackOptions`,
//! `search::hill::HillOptions` and `search::alns::AlnsOptions`; the method table
//! (`method::Method`) says which method holds which.

use crate::error::SpecError;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The headings an option's flag is listed under in `concur solve --help`, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Heading {
    /// The method, the seed, the budgets and the threads.
    Common,
    /// The maps' options (rrr, dm, and what dc shares with them).
    Map,
    /// Divide and concur's own.
    DivideAndConcur,
    /// The tree searches'.
    TreeSearch,
    /// The local searches'.
    LocalSearch,
    /// Where a map runs.
    Gpu,
    /// What the run writes.
    Output,
}

impl Heading {
    /// Every heading, in the help's order.
    pub const ALL: [Heading; 7] = [
        Heading::Common,
        Heading::Map,
        Heading::DivideAndConcur,
        Heading::TreeSearch,
        Heading::LocalSearch,
        Heading::Gpu,
        Heading::Output,
    ];

    /// The heading as the help prints it.
    pub const fn title(self) -> &'static str {
        match self {
            Heading::Common => "Common",
            Heading::Map => "Map",
            Heading::DivideAndConcur => "Divide and concur",
            Heading::TreeSearch => "Tree search",
            Heading::LocalSearch => "Local search",
            Heading::Gpu => "GPU",
            Heading::Output => "Output",
        }
    }
}

/// How an option's flag takes its value on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A switch without a value (`--keep-going`): a `bool` that is false by default.
    Switch,
    /// One value (`--beta 0.5`).
    One,
    /// A comma-separated list (`--operators ring,rows`).
    List,
}

/// The type of an option's value as a flag sees it: what one value on the command line reads
/// into, and how the flag takes it. Implemented for the options' field types.
pub trait Flag {
    /// One value of the flag.
    type Value: Clone + Send + Sync + Serialize + 'static;
    /// How the flag takes its value.
    const KIND: Kind;
    /// The type of the value as Python's keyword argument takes it (what the key's JSON value
    /// reads from), in the package's stubs.
    fn python() -> String;
}

impl Flag for bool {
    type Value = bool;
    const KIND: Kind = Kind::Switch;
    fn python() -> String {
        "bool".into()
    }
}

impl<T: Flag + Clone + Send + Sync + Serialize + 'static> Flag for Option<T> {
    type Value = T;
    const KIND: Kind = Kind::One;
    fn python() -> String {
        format!("{} | None", T::python())
    }
}

impl<T: Flag + Clone + Send + Sync + Serialize + 'static> Flag for Vec<T> {
    type Value = T;
    const KIND: Kind = Kind::List;
    fn python() -> String {
        format!("list[{}]", T::python())
    }
}

/// Makes each of the types named a [`Flag`] that takes one value of itself; in Python a
/// `str` (the value's name, as the flag takes it), or the type written after `=>`.
macro_rules! one_value {
    ($($t:ty $(=> $py:literal)?),* $(,)?) => {
        $(impl $crate::options::Flag for $t {
            type Value = $t;
            const KIND: $crate::options::Kind = $crate::options::Kind::One;
            fn python() -> String {
                $crate::__concur_or!($($py)?, "str").into()
            }
        })*
    };
}
pub(crate) use one_value;

/// The first expression given, else the second (a macro's optional part with its default).
#[doc(hidden)]
#[macro_export]
macro_rules! __concur_or {
    (, $default:expr) => {
        $default
    };
    ($given:expr, $default:expr) => {
        $given
    };
}

one_value!(f32 => "float", f64 => "float", u64 => "int", usize => "int", String, std::path::PathBuf => "str | os.PathLike[str]");

/// One option, as its table declares it.
#[derive(Clone, Copy)]
pub struct Row {
    /// The key: the serde key, a ladder entry's key, Python's keyword argument, and the flag
    /// with `-` for `_`.
    pub key: &'static str,
    /// What it does, as the help says it (the field's doc comment).
    pub doc: &'static str,
    /// Where the help lists it.
    pub heading: Heading,
    /// The placeholder of its value in the help (None: the key in capitals).
    pub value_name: Option<&'static str>,
    /// The methods that use it, by name, where not every method of its options type does.
    pub methods: Option<&'static [&'static str]>,
    /// How the flag takes its value.
    pub kind: Kind,
    /// The type of Python's keyword argument ([`Flag::python`]).
    pub python: fn() -> String,
    /// The flag's parser and action (with the `clap` feature).
    #[cfg(feature = "clap")]
    pub arg: fn(clap::Arg) -> clap::Arg,
    /// The flag's value as the key's JSON value, where the matches hold one.
    #[cfg(feature = "clap")]
    pub read: fn(&clap::ArgMatches, &str) -> Option<serde_json::Value>,
}

impl Row {
    /// The doc as one line.
    pub fn help(&self) -> String {
        self.doc.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The flag: the key with `-` for `_`.
    pub fn flag(&self) -> String {
        self.key.replace('_', "-")
    }
}

impl std::fmt::Debug for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Row").field("key", &self.key).field("heading", &self.heading).finish_non_exhaustive()
    }
}

/// The flag's action and parser for an option of type `T` (its value parser already set).
#[cfg(feature = "clap")]
pub fn flag_arg<T: Flag>(a: clap::Arg) -> clap::Arg {
    match T::KIND {
        Kind::Switch => a.action(clap::ArgAction::SetTrue),
        Kind::One => a.action(clap::ArgAction::Set),
        Kind::List => a.action(clap::ArgAction::Append).value_delimiter(','),
    }
}

/// The value the matches hold for the flag `id` of type `T`, as JSON.
#[cfg(feature = "clap")]
pub fn flag_read<T: Flag>(m: &clap::ArgMatches, id: &str) -> Option<serde_json::Value> {
    match T::KIND {
        Kind::Switch => m.get_flag(id).then_some(serde_json::Value::Bool(true)),
        Kind::One => m.get_one::<T::Value>(id).and_then(|v| serde_json::to_value(v).ok()),
        Kind::List => {
            m.get_many::<T::Value>(id).and_then(|v| serde_json::to_value(v.cloned().collect::<Vec<_>>()).ok())
        }
    }
}

/// What an options table gives: its rows and its idle rules. Written by `options_table!`.
pub trait Table {
    /// Every option, those of a flattened table first.
    fn rows() -> Vec<Row>;

    /// The options whose value would have no effect given the others, each with the end of
    /// the sentence "has no effect ..." (for example `gamma`, "without --weights adaptive").
    fn idle(&self) -> Vec<(&'static str, String)>;

    /// The keys the idle rules name (each is a field: the table does not compile otherwise).
    fn rule_keys() -> Vec<&'static str>;
}

/// A method's options: a table, with the checks of ranges and contradictions.
pub trait Options: Table + Clone + Default + Serialize + DeserializeOwned {
    /// Refuses values out of range and options that contradict each other.
    fn check(&self) -> Result<(), SpecError> {
        Ok(())
    }
}

/// `Some(x)` for one expression, `None` for none.
#[doc(hidden)]
#[macro_export]
macro_rules! __concur_some {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

/// Declares an options type as one table. Each row is an option: its doc comment (the help),
/// `[Heading, value_name = "V", methods = ["rrr"], arg = |a| ...]` (the heading, then any of
/// the others, in that order: the value's placeholder, the methods of the type that use it
/// where not all do, an array of names or a constant such as [`crate::method::MAP_NAMES`],
/// and changes to the flag), and `pub key: Type = default,`. A first row
/// `flatten pub name: Type,` takes another table's options in under the same keys. The
/// `idle(o) { key if condition => "the end of 'has no effect ...'"; }` block after the struct
/// gives the rules under which an option has no effect.
macro_rules! options_table {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $(flatten pub $flat:ident: $fty:ty,)?
            $(
                $(#[doc = $doc:literal])*
                [$heading:ident $(, value_name = $vn:literal)? $(, methods = $ms:expr)? $(, arg = $arg:expr)?]
                pub $key:ident: $ty:ty = $default:expr,
            )*
        }
        $(idle($s:ident) { $($ikey:ident if $cond:expr => $why:expr;)* })?
    ) => {
        $(#[$attr])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default)]
        pub struct $name {
            $(
                #[doc = concat!("The options of [`", stringify!($fty), "`], under the same keys.")]
                #[serde(flatten)]
                pub $flat: $fty,
            )?
            $(
                $(#[doc = $doc])*
                pub $key: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($flat: <$fty>::default(),)?
                    $($key: $default,)*
                }
            }
        }

        impl $crate::options::Table for $name {
            #[allow(clippy::vec_init_then_push)]
            fn rows() -> Vec<$crate::options::Row> {
                #[allow(unused_mut)]
                let mut rows = Vec::new();
                $(rows.extend(<$fty as $crate::options::Table>::rows());)?
                $(rows.push($crate::options::Row {
                    key: stringify!($key),
                    doc: concat!($($doc, "\n"),*),
                    heading: $crate::options::Heading::$heading,
                    value_name: $crate::__concur_some!($($vn)?),
                    methods: $crate::__concur_some!($(&$ms)?),
                    kind: <$ty as $crate::options::Flag>::KIND,
                    python: <$ty as $crate::options::Flag>::python,
                    #[cfg(feature = "clap")]
                    arg: |a: clap::Arg| {
                        let a = $crate::options::flag_arg::<$ty>(
                            a.value_parser(clap::value_parser!(<$ty as $crate::options::Flag>::Value)),
                        );
                        $(let a = ($arg)(a);)?
                        a
                    },
                    #[cfg(feature = "clap")]
                    read: $crate::options::flag_read::<$ty>,
                });)*
                rows
            }

            #[allow(unused_variables, clippy::vec_init_then_push)]
            fn idle(&self) -> Vec<(&'static str, String)> {
                #[allow(unused_mut)]
                let mut idle: Vec<(&'static str, String)> = Vec::new();
                $(idle.extend($crate::options::Table::idle(&self.$flat));)?
                $($({
                    let $s = self;
                    let _ = &$s.$ikey;
                    if $cond {
                        idle.push((stringify!($ikey), String::from($why)));
                    }
                })*)?
                idle
            }

            #[allow(clippy::vec_init_then_push)]
            fn rule_keys() -> Vec<&'static str> {
                #[allow(unused_mut)]
                let mut keys: Vec<&'static str> = Vec::new();
                $(keys.extend(<$fty as $crate::options::Table>::rule_keys());)?
                $($(keys.push(stringify!($ikey));)*)?
                keys
            }
        }
    };
}
pub(crate) use options_table;

/// The keys of a serialised value's object (none for a value that is not an object).
pub fn keys<T: Serialize>(value: &T) -> Vec<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(o)) => o.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Refuses an idle option ([`Table::idle`]) whose value differs from its default: a value
/// set for nothing.
pub fn check_idle<T: Table + Default + Serialize>(options: &T) -> Result<(), SpecError> {
    let idle = options.idle();
    if idle.is_empty() {
        return Ok(());
    }
    let (mine, default) = (serde_json::to_value(options), serde_json::to_value(T::default()));
    let (Ok(mine), Ok(default)) = (mine, default) else { return Ok(()) };
    for (key, because) in idle {
        if mine.get(key) != default.get(key) {
            return Err(SpecError::no_effect(key, because));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    options_table! {
        /// A table to test the macro with.
        pub struct Sample {
            /// A step
            /// of two lines.
            [Map, value_name = "B"]
            pub step: f32 = 0.5,
            /// A switch.
            [Common, methods = ["rrr"]]
            pub off: bool = false,
            /// Some numbers.
            [LocalSearch]
            pub many: Vec<u64> = Vec::new(),
        }
        idle(o) {
            step if o.off => "with --off";
        }
    }

    impl Options for Sample {}

    #[test]
    fn a_table_gives_its_rows_defaults_and_rules() {
        let rows = Sample::rows();
        let keys: Vec<&str> = rows.iter().map(|r| r.key).collect();
        assert_eq!(keys, ["step", "off", "many"]);
        assert_eq!(rows[0].help(), "A step of two lines.");
        assert_eq!((rows[0].value_name, rows[0].heading, rows[0].kind), (Some("B"), Heading::Map, Kind::One));
        assert_eq!((rows[1].methods, rows[1].kind), (Some(&["rrr"][..]), Kind::Switch));
        assert_eq!(rows[2].kind, Kind::List);
        assert_eq!(Sample::default(), Sample { step: 0.5, off: false, many: vec![] });
        assert!(Sample::default().idle().is_empty());
        let s = Sample { off: true, step: 0.25, ..Sample::default() };
        assert_eq!(s.idle(), [("step", "with --off".to_string())]);
        assert_eq!(check_idle(&s).unwrap_err().to_string(), "--step has no effect with --off");
        assert_eq!(Sample::rule_keys(), ["step"]);
    }
}
