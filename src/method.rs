//! A method and its options as one typed value (ARCHITECTURE.md §7): [`Method`] holds one
//! options type per method, whose `Default` is the one place its defaults live. The command
//! line's flags and a ladder entry's keys are the options' serde keys, and both build the
//! same value through [`Method::from_given`], which refuses an option the method does not
//! have, one it would not use given the others ([`crate::options::Options::idle`]), and a
//! value out of range.

use crate::batch::MapKind;
use crate::dc::DcOptions;
use crate::error::SpecError;
use crate::f1::F1Options;
use crate::options::{self, Options};
use crate::search::alns::AlnsOptions;
use crate::search::backtrack::BacktrackOptions;
use crate::search::hill::HillOptions;
use crate::search::scan::ScanSolveOptions;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The solving methods by name: what `--method` and a ladder entry's `method` say, and what
/// a ladder's records carry (serialised as the same lowercase name). The default is RRR, as
/// a run's is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "application", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum MethodName {
    /// RRR (reflect-reflect-relax) between "edges match" and "pieces used once".
    #[default]
    Rrr,
    /// The general-beta difference map between the same two sets.
    Dm,
    /// Divide and concur (Gravel & Elser): replicas per constraint, averaged by concur.
    Dc,
    /// Arc-consistent backtracking with restarts.
    Backtrack,
    /// The row-scan tree search (lookup tables, join budgets), randomised with restarts.
    Scan,
    /// Hill-climbing over full boards with restarts (a control).
    Hill,
    /// Adaptive large-neighbourhood search (a control).
    Alns,
}

impl MethodName {
    /// Every method, in the command line's order.
    pub const ALL: [MethodName; 7] = [
        MethodName::Rrr,
        MethodName::Dm,
        MethodName::Dc,
        MethodName::Backtrack,
        MethodName::Scan,
        MethodName::Hill,
        MethodName::Alns,
    ];

    /// The name the command line, the JSON and a ladder's records use.
    pub fn name(self) -> &'static str {
        match self {
            MethodName::Rrr => "rrr",
            MethodName::Dm => "dm",
            MethodName::Dc => "dc",
            MethodName::Backtrack => "backtrack",
            MethodName::Scan => "scan",
            MethodName::Hill => "hill",
            MethodName::Alns => "alns",
        }
    }

    /// Whether it is one of the maps, which run on a backend (rrr, dm, dc).
    pub fn is_map(self) -> bool {
        matches!(self, MethodName::Rrr | MethodName::Dm | MethodName::Dc)
    }

    /// The method at its defaults.
    pub fn with_defaults(self) -> Method {
        match self {
            MethodName::Rrr => Method::Rrr(F1Options::default()),
            MethodName::Dm => Method::Dm(F1Options::default()),
            MethodName::Dc => Method::Dc(DcOptions::default()),
            MethodName::Backtrack => Method::Backtrack(BacktrackOptions::default()),
            MethodName::Scan => Method::Scan(ScanSolveOptions::default()),
            MethodName::Hill => Method::Hill(HillOptions::default()),
            MethodName::Alns => Method::Alns(AlnsOptions::default()),
        }
    }

    /// The keys of the method's options (its options type's serde keys, less those it never
    /// uses), sorted.
    pub fn keys(self) -> Vec<String> {
        let mut k = options::keys(&self.with_defaults());
        k.retain(|k| k != "method" && !self.never_uses().iter().any(|(n, _)| n == k));
        k
    }

    /// Keys its options type has that this method never uses, with why ("has no effect ..."):
    /// the fused pass is rrr's, though dm shares rrr's options.
    pub fn never_uses(self) -> &'static [(&'static str, &'static str)] {
        match self {
            MethodName::Dm => &[("fused_passes", "with --method dm (the fused pass is rrr's)")],
            _ => &[],
        }
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

/// A method and its options. Serialised with the options' keys beside `"method"`, as a
/// ladder entry and `solve --json` write it; read back with [`Method::from_given`] (which
/// checks) or serde (which does not).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "lowercase")]
pub enum Method {
    /// RRR in edge-colour space (F1).
    Rrr(F1Options),
    /// The difference map in edge-colour space (F1).
    Dm(F1Options),
    /// Divide and concur (F2).
    Dc(DcOptions),
    /// The arc-consistent backtracker.
    Backtrack(BacktrackOptions),
    /// The row-scan search.
    Scan(ScanSolveOptions),
    /// The hill-climber.
    Hill(HillOptions),
    /// Adaptive large-neighbourhood search.
    Alns(AlnsOptions),
}

impl Default for Method {
    /// RRR at its measured defaults.
    fn default() -> Self {
        Method::Rrr(F1Options::default())
    }
}

impl Method {
    /// The method's name.
    pub fn name(&self) -> MethodName {
        match self {
            Method::Rrr(_) => MethodName::Rrr,
            Method::Dm(_) => MethodName::Dm,
            Method::Dc(_) => MethodName::Dc,
            Method::Backtrack(_) => MethodName::Backtrack,
            Method::Scan(_) => MethodName::Scan,
            Method::Hill(_) => MethodName::Hill,
            Method::Alns(_) => MethodName::Alns,
        }
    }

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

    /// The options without effect given the others ([`Options::idle`]), with the method's
    /// own: the fused pass is rrr's.
    pub fn idle(&self) -> Vec<(&'static str, String)> {
        let mut idle = match self {
            Method::Rrr(o) | Method::Dm(o) => o.idle(),
            Method::Dc(o) => o.idle(),
            Method::Backtrack(o) => o.idle(),
            Method::Scan(o) => o.idle(),
            Method::Hill(o) => o.idle(),
            Method::Alns(o) => o.idle(),
        };
        idle.extend(self.name().never_uses().iter().map(|(k, why)| (*k, why.to_string())));
        idle
    }

    /// Refuses values out of range, contradictions, and an idle option set away from its
    /// default ([`options::check_idle`]).
    pub fn check(&self) -> Result<(), SpecError> {
        match self {
            Method::Rrr(o) => o.check().and_then(|()| options::check_idle(o)),
            Method::Dm(o) => {
                o.check().and_then(|()| options::check_idle(o))?;
                if let Some((key, why)) = self.name().never_uses().iter().find(|(k, _)| {
                    serde_json::to_value(o).ok().and_then(|v| v.get(*k).cloned())
                        != serde_json::to_value(F1Options::default()).ok().and_then(|v| v.get(*k).cloned())
                }) {
                    return Err(SpecError::no_effect(key, *why));
                }
                Ok(())
            }
            Method::Dc(o) => o.check().and_then(|()| options::check_idle(o)),
            Method::Backtrack(o) => o.check().and_then(|()| options::check_idle(o)),
            Method::Scan(o) => o.check().and_then(|()| options::check_idle(o)),
            Method::Hill(o) => o.check().and_then(|()| options::check_idle(o)),
            Method::Alns(o) => o.check().and_then(|()| options::check_idle(o)),
        }
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
