//! A method and its options as one typed value (ARCHITECTURE.md §7): [`Method`] holds one
//! options type per method, whose `Default` is the one place its defaults live. The command
//! line's flags and a ladder entry's keys are the options' serde keys, and both build the
//! same value through [`Method::from_given`], which refuses an option the method does not
//! have, one it would not use given the others ([`crate::options::Table::idle`]), and a
//! value out of range.

use crate::batch::MapKind;
use crate::dc::DcOptions;
use crate::error::SpecError;
use crate::f1::F1Options;
use crate::options::{self, Options, Row, Table};
use crate::search::alns::AlnsOptions;
use crate::search::backtrack::BacktrackOptions;
use crate::search::beam::BeamOptions;
use crate::search::hill::HillOptions;
use crate::search::scan::ScanSolveOptions;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The one list of the methods: for each, its variant, its name (`--method`, the JSON, a
/// ladder's records), its options type, the type of its part of a report (`report::Outcome`),
/// and whether it is a map (which runs on a backend) or a search. It hands the list to the
/// macro named (`$then!`), which writes what it needs from it: [`MethodName`] and [`Method`]
/// here, the report's outcome in `report`. Adding a method is a line here, its options type
/// and its outcome type.
macro_rules! methods {
    ($then:ident) => {
        $then! {
            /// RRR (reflect-reflect-relax) between "edges match" and "pieces used once" (F1).
            Rrr "rrr" F1Options MapOutcome map,
            /// The general-beta difference map between the same two sets (F1).
            Dm "dm" F1Options MapOutcome map,
            /// Divide and concur (Gravel & Elser, F2): replicas per constraint, averaged by
            /// concur.
            Dc "dc" DcOptions MapOutcome map,
            /// Arc-consistent backtracking with restarts.
            Backtrack "backtrack" BacktrackOptions BacktrackOutcome search,
            /// The row-scan tree search (lookup tables, join budgets), randomised with restarts.
            Scan "scan" ScanSolveOptions ScanOutcome search,
            /// Hill-climbing over full boards with restarts (a control).
            Hill "hill" HillOptions LocalOutcome search,
            /// Adaptive large-neighbourhood search (a control).
            Alns "alns" AlnsOptions AlnsOutcome search,
            /// The beam builder with ALNS polish (the partial-score pipeline).
            Beam "beam" BeamOptions BeamOutcome search,
        }
    };
}
pub(crate) use methods;

/// The maps' names, in the command line's order: the methods whose column in `methods!` says
/// `map` (rrr, dm, dc), for the options that only the maps use and the refusals that name them.
pub const MAP_NAMES: [&str; map_count()] = map_names();

const fn map_count() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < MethodName::ALL.len() {
        if MethodName::ALL[i].is_map() {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn map_names() -> [&'static str; map_count()] {
    let mut out = [""; map_count()];
    let (mut k, mut i) = (0, 0);
    while i < MethodName::ALL.len() {
        if MethodName::ALL[i].is_map() {
            out[k] = MethodName::ALL[i].name();
            k += 1;
        }
        i += 1;
    }
    out
}

/// `true` for a map, `false` for a search (a column of `methods!`).
macro_rules! is_map {
    (map) => {
        true
    };
    (search) => {
        false
    };
}

/// [`MethodName`] and [`Method`] from the list.
macro_rules! method_types {
    ($($(#[doc = $doc:literal])* $v:ident $name:literal $opts:ident $outcome:ident $kind:ident,)*) => {
        /// The solving methods by name: what `--method` and a ladder entry's `method` say, and
        /// what a ladder's records carry (serialised as the same lowercase name). The default
        /// is RRR, as a run's is.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
        #[serde(rename_all = "lowercase")]
        pub enum MethodName {
            #[default]
            $($(#[doc = $doc])* $v,)*
        }

        impl MethodName {
            /// Every method, in the command line's order.
            pub const ALL: [MethodName; [$($name),*].len()] = [$(MethodName::$v),*];

            /// The name the command line, the JSON and a ladder's records use.
            pub const fn name(self) -> &'static str {
                match self {
                    $(MethodName::$v => $name,)*
                }
            }

            /// Whether it is one of the maps, which run on a backend ([`MAP_NAMES`]).
            pub const fn is_map(self) -> bool {
                match self {
                    $(MethodName::$v => is_map!($kind),)*
                }
            }

            /// The method at its defaults.
            pub fn with_defaults(self) -> Method {
                match self {
                    $(MethodName::$v => Method::$v($opts::default()),)*
                }
            }

            /// The rows of its options type (each option declared once: [`options::Table`]),
            /// less those it never uses.
            pub fn rows(self) -> Vec<Row> {
                let rows = match self {
                    $(MethodName::$v => <$opts as Table>::rows(),)*
                };
                rows.into_iter().filter(|r| r.methods.is_none_or(|m| m.contains(&self.name()))).collect()
            }
        }

        /// A method and its options. Serialised with the options' keys beside `"method"`, as a
        /// ladder entry and `solve --json` write it; read back with [`Method::from_given`]
        /// (which checks) or serde (which does not).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "method", rename_all = "lowercase")]
        pub enum Method {
            $($(#[doc = $doc])* $v($opts),)*
        }

        impl Method {
            /// The method's name.
            pub fn name(&self) -> MethodName {
                match self {
                    $(Method::$v(_) => MethodName::$v,)*
                }
            }

            /// The options without effect given the others ([`Table::idle`]).
            pub fn idle(&self) -> Vec<(&'static str, String)> {
                match self {
                    $(Method::$v(o) => o.idle(),)*
                }
            }

            /// Refuses values out of range, contradictions, an idle option set away from its
            /// default ([`options::check_idle`]), and an option of its type that the method
            /// never uses set away from its default.
            pub fn check(&self) -> Result<(), SpecError> {
                match self {
                    $(Method::$v(o) => {
                        o.check().and_then(|()| options::check_idle(o))?;
                        never_used(self.name(), o)
                    })*
                }
            }
        }
    };
}
methods!(method_types);

/// Refuses a key of `options` that `name` never uses (a row whose `methods` leave it out) set
/// away from its default.
fn never_used<T: Options>(name: MethodName, options: &T) -> Result<(), SpecError> {
    let (Ok(mine), Ok(default)) = (serde_json::to_value(options), serde_json::to_value(T::default())) else {
        return Ok(());
    };
    for row in T::rows() {
        let Some(users) = row.methods.filter(|m| !m.contains(&name.name())) else { continue };
        if mine.get(row.key) != default.get(row.key) {
            let names = users.join(", ");
            let why = format!("with --method {name} (it is an option of {names} only)");
            return Err(SpecError::no_effect(row.key, why));
        }
    }
    Ok(())
}

impl MethodName {
    /// The keys of the method's options, in its table's order.
    pub fn keys(self) -> Vec<String> {
        self.rows().iter().map(|r| r.key.to_string()).collect()
    }
}

impl std::fmt::Display for MethodName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for MethodName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        MethodName::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = MethodName::ALL.iter().map(|m| m.name()).collect();
            format!("unknown method {s:?}; the methods are {}", names.join(", "))
        })
    }
}

impl Default for Method {
    /// RRR at its measured defaults.
    fn default() -> Self {
        MethodName::default().with_defaults()
    }
}

impl Method {
    /// Whether it is one of the maps (rrr, dm, dc).
    pub fn is_map(&self) -> bool {
        self.name().is_map()
    }

    /// F1's options and map, for rrr and dm.
    pub fn f1(&self) -> Option<(MapKind, &F1Options)> {
        match self {
            Method::Rrr(o) => Some((MapKind::Rrr, o)),
            Method::Dm(o) => Some((MapKind::Dm, o)),
            _ => None,
        }
    }

    /// The options every map has, for rrr, dm and dc.
    pub fn map_options(&self) -> Option<&crate::batch::MapOptions> {
        match self {
            Method::Rrr(o) | Method::Dm(o) => Some(&o.map),
            Method::Dc(o) => Some(&o.map),
            _ => None,
        }
    }

    /// Whether the run is in rate mode (`keep_going`, the maps only).
    pub fn keep_going(&self) -> bool {
        self.map_options().is_some_and(|m| m.keep_going)
    }

    /// The method `name` with the options given in `given` (keys as the options' serde keys,
    /// the command line's flags with `_` for `-`), checked: a key no method has, a key of
    /// another method, a key the run would not use given its other options, and a value that
    /// does not read or is out of range are refused, each naming its key. Keys the caller
    /// handles itself must be taken out of `given` first.
    pub fn from_given(name: MethodName, given: &Map<String, Value>) -> Result<Method, SpecError> {
        let mine = name.keys();
        for key in given.keys() {
            if mine.contains(key) {
                continue;
            }
            let methods: Vec<&'static str> =
                MethodName::ALL.iter().filter(|m| m.keys().contains(key)).map(|m| m.name()).collect();
            return Err(if methods.is_empty() {
                SpecError::Unknown { key: key.clone() }
            } else {
                SpecError::NotForMethod { key: key.clone(), method: name.name(), methods }
            });
        }
        let with_name = |extra: Map<String, Value>| {
            let mut o = extra;
            o.insert("method".into(), Value::String(name.name().into()));
            serde_json::from_value::<Method>(Value::Object(o))
        };
        // One key at a time first, so that a value that does not read names its key.
        for (key, value) in given {
            let one: Map<String, Value> = [(key.clone(), value.clone())].into_iter().collect();
            with_name(one).map_err(|e| SpecError::Value { key: key.clone(), reason: plain(&e) })?;
        }
        let mut method = with_name(given.clone()).map_err(|e| SpecError::Value {
            key: given.keys().next().cloned().unwrap_or_default(),
            reason: plain(&e),
        })?;
        if let Method::Dc(o) = &mut method {
            if o.hybrid.is_some() && given.contains_key("layout") {
                return Err(SpecError::conflict("hybrid", "is an alias of --layout hybrid; give one of the two"));
            }
            *o = o.clone().normalised();
        }
        if let Some((key, because)) = method.idle().into_iter().find(|(k, _)| given.contains_key(*k)) {
            return Err(SpecError::no_effect(key, because));
        }
        method.check()?;
        Ok(method)
    }
}

/// A serde error's text without its position (the values come from flags or a ladder entry).
fn plain(e: &serde_json::Error) -> String {
    let t = e.to_string();
    match t.find(" at line ") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn given(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn a_method_reads_its_own_options_and_names_the_key_it_refuses() {
        let m = Method::from_given(MethodName::Rrr, &given(json!({"beta": 0.5, "join_weights": [1, 1, 2]}))).unwrap();
        let Method::Rrr(o) = &m else { panic!("rrr") };
        assert_eq!((o.map.beta, o.join_weights.0), (0.5, [1.0, 1.0, 2.0]));
        let e = Method::from_given(MethodName::Rrr, &given(json!({"layout": "plain"}))).unwrap_err();
        assert_eq!(e.to_string(), "--layout is an option of --method dc, not of rrr");
        let e = Method::from_given(MethodName::Dc, &given(json!({"gamma": 0.2}))).unwrap_err();
        assert_eq!(e.to_string(), "--gamma has no effect without --weights adaptive");
        let e = Method::from_given(MethodName::Scan, &given(json!({"nonsense": 1}))).unwrap_err();
        assert_eq!(e, SpecError::Unknown { key: "nonsense".into() });
        let e = Method::from_given(MethodName::Rrr, &given(json!({"beta": "big"}))).unwrap_err();
        assert_eq!(e.key(), Some("beta"));
        let e = Method::from_given(MethodName::Rrr, &given(json!({"beta": 3.0}))).unwrap_err();
        assert_eq!(e.to_string(), "--beta must be in (0, 2], got 3");
    }

    #[test]
    fn the_defaults_serialise_and_read_back_the_same() {
        for name in MethodName::ALL {
            let m = name.with_defaults();
            let v = serde_json::to_value(&m).unwrap();
            assert_eq!(v["method"], name.name());
            let back: Method = serde_json::from_value(v).unwrap();
            assert_eq!(back, m, "{name}");
            assert_eq!(Method::from_given(name, &Map::new()).unwrap(), m, "{name}");
        }
    }

    #[test]
    fn the_hybrid_alias_is_folded_into_the_layout() {
        let m = Method::from_given(MethodName::Dc, &given(json!({"hybrid": false}))).unwrap();
        let Method::Dc(o) = m else { panic!("dc") };
        assert_eq!((o.layout, o.hybrid), (crate::dc::DcLayout::Plain, None));
        assert!(Method::from_given(MethodName::Dc, &given(json!({"hybrid": true, "layout": "plain"}))).is_err());
    }
}
