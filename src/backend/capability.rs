//! What runs where (ARCHITECTURE.md §5), written once: what a run needs of the backend that
//! runs it ([`needs`], from the batch's configuration), what each backend offers
//! ([`TABLE`]), and the one function that compares the two ([`check`]) and gives a refusal's
//! one line. The docs' table of what runs where is [`markdown`] of this table, and a test
//! fails when the committed copy differs.

use super::{MapJob, Unsupported};
use crate::assign::Precision;
use crate::dc::{DcLayout, Readout};
use crate::f1::map::AssignOn;

/// Something a batch may need of its backend, each asked for by an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// F1, the maps in edge-colour space (`--method rrr`, `dm`).
    F1,
    /// Divide and concur (`--method dc`).
    Dc,
    /// Divide and concur's hybrid layout (`--layout hybrid`, dc's default).
    DcHybrid,
    /// Divide and concur's assignment readout every iteration (`--readout assignment`).
    DcReadoutAssignment,
    /// Arc consistency folded into divide and concur (`--propagate`).
    DcPropagate,
    /// F1's assignments on the host (`--assign cpu`).
    HostAssign,
    /// F1's assignments by the device's shortest augmenting paths (`--assign gpu-jv`).
    GpuJv,
    /// The same, a subgroup per problem (`--assign gpu-jv-sg`).
    GpuJvSg,
    /// The same, each problem's costs staged in workgroup memory (`--assign gpu-jv-sg-staged`).
    GpuJvSgStaged,
    /// F1's assignments by the device's auction (`--assign gpu-auction`).
    GpuAuction,
    /// F1's device loop: the assignments on the device and no completion search, blocks of K
    /// iterations with no host wait inside a piece.
    DeviceLoop,
    /// Rate mode (`--keep-going`).
    RateMode,
    /// rrr's fused pass per trial in the device loop (`--fused-passes`).
    FusedPasses,
    /// A batch split over every adapter (`--adapter all`).
    SeveralAdapters,
    /// Fixed-point certificates (`--dump-state`).
    Certificates,
    /// F1's adaptive metric (`--adapt`).
    AdaptiveMetric,
    /// F1's kicked stall restarts (`--kick`).
    Kick,
    /// The arc-consistent completion of near-solutions (`--complete`).
    Completion,
    /// F1's host assignments in f32 (`--reduced-costs f32`).
    ReducedCostsF32,
    /// A run continued from the snapshot of its earlier part (`SolveSpec::resume`: the
    /// ladder's `--resume` of a run a stop request cut short).
    Resume,
}

impl Feature {
    /// Every feature, in the table's order.
    pub const ALL: [Feature; 20] = [
        Feature::F1,
        Feature::Dc,
        Feature::DcHybrid,
        Feature::DcReadoutAssignment,
        Feature::DcPropagate,
        Feature::HostAssign,
        Feature::GpuJv,
        Feature::GpuJvSg,
        Feature::GpuJvSgStaged,
        Feature::GpuAuction,
        Feature::DeviceLoop,
        Feature::RateMode,
        Feature::FusedPasses,
        Feature::SeveralAdapters,
        Feature::Certificates,
        Feature::AdaptiveMetric,
        Feature::Kick,
        Feature::Completion,
        Feature::ReducedCostsF32,
        Feature::Resume,
    ];

    /// What asks for it, as a user writes it.
    pub fn asked_by(self) -> &'static str {
        match self {
            Feature::F1 => "--method rrr, dm",
            Feature::Dc => "--method dc",
            Feature::DcHybrid => "--layout hybrid (dc's default; --layout plain runs on both)",
            Feature::DcReadoutAssignment => "--readout assignment",
            Feature::DcPropagate => "--propagate",
            Feature::HostAssign => "--assign cpu",
            Feature::GpuJv => "--assign gpu-jv",
            Feature::GpuJvSg => "--assign gpu-jv-sg",
            Feature::GpuJvSgStaged => "--assign gpu-jv-sg-staged",
            Feature::GpuAuction => "--assign gpu-auction",
            Feature::DeviceLoop => "the device loop (--assign gpu-*, no --complete)",
            Feature::RateMode => "--keep-going (rate mode)",
            Feature::FusedPasses => "--fused-passes",
            Feature::SeveralAdapters => "--adapter all",
            Feature::Certificates => "--dump-state (certificates)",
            Feature::AdaptiveMetric => "--adapt",
            Feature::Kick => "--kick",
            Feature::Completion => "--complete",
            Feature::ReducedCostsF32 => "--reduced-costs f32",
            Feature::Resume => "continuing a run from its snapshot (ladder --resume of a stopped run)",
        }
    }

    /// The run option that asks for it (its key, the command line's flag with `_`).
    pub fn key(self) -> &'static str {
        match self {
            Feature::F1 | Feature::Dc => "method",
            Feature::DcHybrid => "layout",
            Feature::DcReadoutAssignment => "readout",
            Feature::DcPropagate => "propagate",
            Feature::HostAssign
            | Feature::GpuJv
            | Feature::GpuJvSg
            | Feature::GpuJvSgStaged
            | Feature::GpuAuction
            | Feature::DeviceLoop => "assign",
            Feature::RateMode => "keep_going",
            Feature::FusedPasses => "fused_passes",
            Feature::SeveralAdapters => "adapter",
            Feature::Certificates => "dump_state",
            Feature::AdaptiveMetric => "adapt",
            Feature::Kick => "kick",
            Feature::Completion => "complete",
            Feature::ReducedCostsF32 => "reduced_costs",
            Feature::Resume => "resume",
        }
    }

    /// The feature of an assignment placement (`auto` resolved first; None for `auto`).
    pub fn of_assign(a: AssignOn) -> Option<Feature> {
        match a {
            AssignOn::Auto => None,
            AssignOn::Cpu => Some(Feature::HostAssign),
            AssignOn::GpuJv => Some(Feature::GpuJv),
            AssignOn::GpuJvSg => Some(Feature::GpuJvSg),
            AssignOn::GpuJvSgStaged => Some(Feature::GpuJvSgStaged),
            AssignOn::GpuAuction => Some(Feature::GpuAuction),
        }
    }
}

/// Whether a backend offers a feature: not at all, or yes, but only together with every
/// feature of `with` and with none of `without`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Whether the backend offers the feature at all.
    pub yes: bool,
    /// Features the run must also have for it.
    pub with: &'static [Feature],
    /// Features the run must not have with it.
    pub without: &'static [Feature],
}

const YES: Offer = Offer { yes: true, with: &[], without: &[] };
const NO: Offer = Offer { yes: false, with: &[], without: &[] };

/// The backends, as the table's columns, and the GPU stepper (Python's `F1Map(backend="gpu")`,
/// `backend::gpu::f1::F1GpuStepper`), which steps a batch on the GPU backend's device loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The CPU backend.
    Cpu,
    /// The GPU backend (wgpu).
    Gpu,
    /// The GPU stepper: it runs what the GPU backend runs and what its own column allows.
    GpuStepper,
}

impl Place {
    /// The backend's name in messages and the docs (the stepper's is its backend's).
    pub fn name(self) -> &'static str {
        match self {
            Place::Cpu => "cpu",
            Place::Gpu | Place::GpuStepper => "gpu",
        }
    }
}

/// One row of the table: a feature, what the CPU backend offers, what the GPU backend offers,
/// and what the GPU stepper adds to the GPU backend's limits.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The feature.
    pub feature: Feature,
    /// What the CPU backend offers.
    pub cpu: Offer,
    /// What the GPU backend offers.
    pub gpu: Offer,
    /// What the GPU stepper offers (it steps only the device loop, on one device, and a
    /// solved trial stands still, so no rate mode).
    pub stepper: Offer,
}

impl Row {
    /// What `place` offers.
    pub fn at(&self, place: Place) -> Offer {
        match place {
            Place::Cpu => self.cpu,
            Place::Gpu => self.gpu,
            Place::GpuStepper => self.stepper,
        }
    }
}

const DEVICE_JV: &[Feature] = &[Feature::GpuJv, Feature::GpuJvSg, Feature::GpuJvSgStaged];

/// What runs where: every feature, on each backend.
pub const TABLE: &[Row] = &[
    Row { feature: Feature::F1, cpu: YES, gpu: YES, stepper: YES },
    Row { feature: Feature::Dc, cpu: YES, gpu: YES, stepper: NO },
    Row { feature: Feature::DcHybrid, cpu: YES, gpu: NO, stepper: NO },
    Row { feature: Feature::DcReadoutAssignment, cpu: YES, gpu: NO, stepper: NO },
    Row { feature: Feature::DcPropagate, cpu: YES, gpu: NO, stepper: NO },
    Row { feature: Feature::HostAssign, cpu: YES, gpu: YES, stepper: NO },
    Row { feature: Feature::GpuJv, cpu: NO, gpu: YES, stepper: YES },
    Row { feature: Feature::GpuJvSg, cpu: NO, gpu: YES, stepper: YES },
    Row { feature: Feature::GpuJvSgStaged, cpu: NO, gpu: YES, stepper: YES },
    Row { feature: Feature::GpuAuction, cpu: NO, gpu: YES, stepper: YES },
    Row { feature: Feature::DeviceLoop, cpu: NO, gpu: YES, stepper: YES },
    Row {
        feature: Feature::RateMode,
        cpu: YES,
        gpu: Offer { yes: true, with: &[Feature::DeviceLoop], without: &[Feature::SeveralAdapters] },
        stepper: NO,
    },
    Row {
        feature: Feature::FusedPasses,
        cpu: NO,
        gpu: Offer { yes: true, with: &[Feature::DeviceLoop], without: &[] },
        stepper: Offer { yes: true, with: &[Feature::DeviceLoop], without: &[] },
    },
    Row {
        feature: Feature::SeveralAdapters,
        cpu: NO,
        gpu: Offer { yes: true, with: &[Feature::F1], without: &[] },
        stepper: NO,
    },
    Row { feature: Feature::Certificates, cpu: YES, gpu: NO, stepper: NO },
    Row { feature: Feature::AdaptiveMetric, cpu: YES, gpu: NO, stepper: NO },
    Row { feature: Feature::Kick, cpu: YES, gpu: NO, stepper: NO },
    Row {
        feature: Feature::Completion,
        cpu: YES,
        gpu: Offer { yes: true, with: &[], without: DEVICE_JV },
        stepper: NO,
    },
    Row {
        feature: Feature::ReducedCostsF32,
        cpu: YES,
        gpu: Offer { yes: true, with: &[Feature::HostAssign], without: &[] },
        stepper: NO,
    },
    Row { feature: Feature::Resume, cpu: YES, gpu: NO, stepper: NO },
];

/// The row of `feature`.
pub fn row(feature: Feature) -> &'static Row {
    TABLE.iter().find(|r| r.feature == feature).expect("every feature has a row")
}

/// What the batch `job` needs of its backend, with F1's placement `assign` already resolved
/// by the backend (`auto` taken as it resolves there) and `adapters` the devices it spans.
pub fn needs(job: MapJob<'_>, assign: AssignOn, adapters: usize) -> Vec<Feature> {
    let mut n = Vec::new();
    let mut add = |on: bool, f: Feature| {
        if on {
            n.push(f);
        }
    };
    match job {
        MapJob::F1(c) => {
            add(true, Feature::F1);
            if let Some(f) = Feature::of_assign(assign) {
                add(true, f);
            }
            add(assign.on_device() && c.complete.is_none(), Feature::DeviceLoop);
            add(c.keep_going, Feature::RateMode);
            add(c.fused_passes, Feature::FusedPasses);
            add(c.keep_fixed_points, Feature::Certificates);
            add(c.adapt.is_some(), Feature::AdaptiveMetric);
            add(c.kick.is_some(), Feature::Kick);
            add(c.complete.is_some(), Feature::Completion);
            add(c.reduced_costs == Precision::F32, Feature::ReducedCostsF32);
            add(c.resume.is_some(), Feature::Resume);
        }
        MapJob::Dc(c) => {
            add(true, Feature::Dc);
            add(c.layout == DcLayout::Hybrid, Feature::DcHybrid);
            add(c.readout == Readout::Assignment, Feature::DcReadoutAssignment);
            add(c.propagate.is_some(), Feature::DcPropagate);
            add(c.keep_going, Feature::RateMode);
            add(c.keep_fixed_points, Feature::Certificates);
            add(c.complete.is_some(), Feature::Completion);
            add(c.resume.is_some(), Feature::Resume);
        }
    }
    add(adapters > 1, Feature::SeveralAdapters);
    n
}

/// The placements of F1's assignments that `--assign auto` picks from, in order of
/// preference: the device JV (on the GPU backend, 15x the host assignment's whole iteration
/// on an H200 at 8x8, BENCHMARKS.md), then the host's.
pub const AUTO_ASSIGN: [AssignOn; 2] = [AssignOn::GpuJv, AssignOn::Cpu];

/// Whether `f` follows from where F1's assignments run (the features `--assign` asks for).
fn placement(f: &Feature) -> bool {
    f.key() == "assign"
}

/// What `assign` means at `place` for the F1 batch `cfg`: any choice but `auto` stands; `auto`
/// is the first placement of [`AUTO_ASSIGN`] that the table lets the run use there: `place`
/// offers its features, no feature of the run excludes them (`Offer::without`: `--complete`
/// on the GPU), and every placement a feature of the run needs comes with it (`Offer::with`:
/// `--reduced-costs f32` needs the host's assignments, rate mode on the GPU its device loop).
/// The host's when none fits; the run's other features are [`check`]'s to refuse.
pub fn resolve_assign(assign: AssignOn, place: Place, cfg: &crate::f1::map::MapConfig) -> AssignOn {
    if assign != AssignOn::Auto {
        return assign;
    }
    let job = MapJob::F1(cfg);
    let run: Vec<Feature> = needs(job, AssignOn::Auto, 1).into_iter().filter(|f| !placement(f)).collect();
    let fits = |a: AssignOn| {
        let own: Vec<Feature> = needs(job, a, 1).into_iter().filter(placement).collect();
        let offered = own.iter().all(|&f| {
            let o = row(f).at(place);
            o.yes && !o.without.iter().any(|w| run.contains(w))
        });
        offered
            && run.iter().all(|&g| {
                let o = row(g).at(place);
                !o.without.iter().any(|w| own.contains(w))
                    && o.with.iter().filter(|w| placement(w)).all(|w| own.contains(w))
            })
    };
    AUTO_ASSIGN.into_iter().find(|&a| fits(a)).unwrap_or(AssignOn::Cpu)
}

/// Whether `place` runs a batch that needs `needs`; Err: the first refusal, in one line.
pub fn check(place: Place, needs: &[Feature]) -> Result<(), Unsupported> {
    for &f in needs {
        let refuse = |why: String| Err(Unsupported { backend: place.name(), why, feature: f });
        let offer = row(f).at(place);
        if !offer.yes {
            let elsewhere = [Place::Cpu, Place::Gpu].into_iter().filter(|p| *p != place && row(f).at(*p).yes);
            let names: Vec<&str> = elsewhere.map(Place::name).collect();
            return refuse(if names.is_empty() {
                format!("{} runs on no backend", f.asked_by())
            } else {
                format!("{} runs on the {} backend", f.asked_by(), names.join(", "))
            });
        }
        if let Some(missing) = offer.with.iter().find(|w| !needs.contains(w)) {
            return refuse(format!("{} runs with {} here", f.asked_by(), missing.asked_by()));
        }
        if let Some(clash) = offer.without.iter().find(|w| needs.contains(w)) {
            return refuse(format!("{} does not run with {} here", f.asked_by(), clash.asked_by()));
        }
    }
    Ok(())
}

/// The table as Markdown: a row per feature, a column per backend.
pub fn markdown() -> String {
    let cell = |o: Offer| {
        if !o.yes {
            return "no".to_string();
        }
        let mut s = "yes".to_string();
        if !o.with.is_empty() {
            let w: Vec<&str> = o.with.iter().map(|f| f.asked_by()).collect();
            s.push_str(&format!(", with {}", w.join(" and ")));
        }
        if !o.without.is_empty() {
            let w: Vec<&str> = o.without.iter().map(|f| f.asked_by()).collect();
            s.push_str(&format!(", not with {}", w.join(" or ")));
        }
        s
    };
    let mut out = String::from("| what | cpu backend | gpu backend | gpu stepper (Python) |\n|---|---|---|---|\n");
    for r in TABLE {
        let stepper = if r.gpu.yes { cell(r.stepper) } else { "-".to_string() };
        out.push_str(&format!("| {} | {} | {} | {stepper} |\n", r.feature.asked_by(), cell(r.cpu), cell(r.gpu)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auto` as the table resolves it is the rule it replaced, written out: the device JV on
    /// the GPU unless the run needs the host every iteration (a completion, f32 reduced
    /// costs); the host's on the CPU. Over every combination of the options the table knows.
    #[test]
    fn auto_resolves_from_the_table_as_the_written_rule() {
        use crate::batch::Completion;
        use crate::f1::map::{AdaptiveWeights, MapConfig};
        let mut seen = [0usize; 2];
        for bits in 0u32..(1 << 7) {
            let on = |i: u32| bits & (1 << i) != 0;
            let cfg = MapConfig {
                complete: on(0).then(Completion::default),
                reduced_costs: if on(1) { Precision::F32 } else { Precision::F64 },
                keep_going: on(2),
                fused_passes: on(3),
                keep_fixed_points: on(4),
                adapt: on(5).then_some(AdaptiveWeights { rate: 0.1, decay: 0.1, max: 2.0 }),
                kick: on(6).then_some(0.5),
                ..MapConfig::default()
            };
            // The GPU stepper resolves `auto` as the GPU backend does.
            for place in [Place::Cpu, Place::Gpu] {
                let gpu = place == Place::Gpu;
                let written = if gpu && cfg.complete.is_none() && cfg.reduced_costs == Precision::F64 {
                    AssignOn::GpuJv
                } else {
                    AssignOn::Cpu
                };
                let got = resolve_assign(AssignOn::Auto, place, &cfg);
                assert_eq!(got, written, "{place:?} {bits:07b}");
                seen[usize::from(got == AssignOn::GpuJv)] += 1;
                for other in [AssignOn::Cpu, AssignOn::GpuJvSg, AssignOn::GpuAuction] {
                    assert_eq!(resolve_assign(other, place, &cfg), other, "a choice stands");
                }
            }
        }
        assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
    }

    #[test]
    fn every_feature_has_one_row_and_every_rule_names_a_feature_with_a_row() {
        for f in Feature::ALL {
            assert_eq!(TABLE.iter().filter(|r| r.feature == f).count(), 1, "{f:?}");
        }
        assert_eq!(TABLE.len(), Feature::ALL.len());
    }

    #[test]
    fn the_gpu_refuses_rate_mode_outside_the_device_loop_and_over_several_adapters() {
        use Feature::*;
        assert!(check(Place::Gpu, &[F1, GpuJv, DeviceLoop, RateMode]).is_ok());
        let e = check(Place::Gpu, &[F1, HostAssign, RateMode]).unwrap_err();
        assert!(e.why.contains("--keep-going") && e.why.contains("device loop"), "{e}");
        assert!(check(Place::Gpu, &[F1, GpuJv, DeviceLoop, RateMode, SeveralAdapters]).is_err());
        assert!(check(Place::Cpu, &[F1, HostAssign, RateMode]).is_ok());
        let e = check(Place::Cpu, &[F1, GpuJv]).unwrap_err();
        assert_eq!(e.to_string(), "not supported by the cpu backend: --assign gpu-jv runs on the gpu backend");
        assert!(check(Place::Gpu, &[F1, GpuJv, Completion]).is_err());
        assert!(check(Place::Gpu, &[F1, GpuAuction, Completion]).is_ok());
    }
}
