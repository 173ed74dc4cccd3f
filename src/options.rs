//! What every method's options say of themselves (ARCHITECTURE.md §7): each method has one
//! options type (`f1::F1Options`, `dc::DcOptions`, `search::scan::ScanSolveOptions`,
//! `search::backtrack::BacktrackOptions`, `search::hill::HillOptions`,
//! `search::alns::AlnsOptions`; the method enum that holds them is `method::Method`) whose
//! `Default` is the one place its defaults live, whose serde keys are the command line's
//! flags (`join_weights` is `--join-weights`) and a ladder entry's keys, and which says here
//! which of its values it checks and which have no effect given the others.

use crate::error::SpecError;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A method's options.
pub trait Options: Clone + Default + Serialize + DeserializeOwned {
    /// Refuses values out of range and options that contradict each other.
    fn check(&self) -> Result<(), SpecError> {
        Ok(())
    }

    /// The options whose value would have no effect given the others, each with the end of
    /// the sentence "has no effect ..." (for example `gamma`, "without --weights adaptive").
    fn idle(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// The keys of a serialised value's object (none for a value that is not an object).
pub fn keys<T: Serialize>(value: &T) -> Vec<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(o)) => o.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Refuses an idle option ([`Options::idle`]) whose value differs from its default: a value
/// set for nothing.
pub fn check_idle<T: Options>(options: &T) -> Result<(), SpecError> {
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
