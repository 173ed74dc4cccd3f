"""The keyword arguments ``**options`` of concur's entry points, each with its type, the
engine's default and its doc. Made from the engine's option tables by ``python -m
concur._stubs > python/concur/_options.pyi``; do not edit (python/tests/test_options.py
holds it to the engine)."""

import os
from collections.abc import Sequence
from typing import TypedDict


class SolveOptions(TypedDict, total=False):
    """The options of concur.solve() and concur.solutions() beyond their named arguments: every method's."""

    solutions: str | os.PathLike[str] | None
    """With --keep-going: append every solution to this file as one JSON line when it is found
    (flushed, so a killed run keeps every solution found). Default: not set."""
    beta: float
    """The map's step size (the best measured for rrr, dm and dc on Brendan Owen's set 1:
    BENCHMARKS.md, the beta sweep). Default: 0.7."""
    no_cycle_restart: bool
    """Do not restart trials caught in exact limit cycles. Default: False."""
    all_trials: bool
    """Run every trial to its budget instead of stopping at the first solution (success rates and
    iteration quartiles). Default: False."""
    keep_going: bool
    """Rate mode: a solution does not end the run. Each solved trial's board is verified and
    recorded, and the trial goes on from a fresh point of its seeded stream, until --time-limit
    or every trial's --max-iters; the run reports its trial-iterations, every solution, and how
    many are distinct up to turning the board. Default: False."""
    complete: int | None
    """Arc-consistent completion: when a trial's best board has at most K mismatched joins (or
    stalls), free those cells plus a halo and search them with the backtracker. Default: not
    set."""
    complete_radius: int
    """The halo's radius around the mismatched cells of --complete. Default: 1."""
    complete_nodes: int
    """Node limit of one completion search. Default: 20000."""
    complete_stall: int
    """Iterations without improvement after which a trial's best board is completed. Default: 5000."""
    edge: str
    """F1's edge projection: the average per join (P_E), or one colour per join (P_E1). Default:
    'average'."""
    restart_stall: int
    """Restart a trial after this many iterations without a new best score since its last
    (re)start; 0 never restarts. It rescues the trials the weighted metric traps, at no measured
    cost (BENCHMARKS.md). Default: 100000."""
    kick: float | None
    """A stall restart perturbs x by S * (u - 1/2) per coordinate instead of drawing a fresh random
    point. Default: not set."""
    join_weights: Sequence[float]
    """The metric between the constraint classes: the weights of the sides of frame-frame,
    frame-inner and inner-inner joins (1,1,1 is the uniform metric; P_P picks the nearest board
    in that metric). Default: [1.0, 1.0, 4.0]."""
    adapt: dict[str, float] | None
    """An adaptive metric on top of the join weights: a join's weight grows by RATE times its class
    weight in every iteration that leaves it unmatched, decays back by the fraction DECAY, and
    stays below MAX times its class weight. Default: not set."""
    cold_assign: bool
    """Solve every assignment cold instead of warm-starting from the previous duals. Default:
    False."""
    reduced_costs: str
    """The precision of the host assignments' potentials and reduced costs: f64 (the reference) or
    f32 (twice the lanes per vector; near-ties may break differently). Default: 'f64'."""
    assign: str
    """Where rrr's and dm's assignments are solved: auto (the backend's fastest measured: gpu-jv on
    the GPU, the host's JV where the run needs the host every iteration), cpu (the host's exact
    JV; the reference), gpu-jv (alias gpu: the device's exact shortest augmenting paths, a
    workgroup per problem), gpu-jv-sg (a subgroup per problem), gpu-jv-sg-staged (each problem's
    costs in workgroup memory) or gpu-auction. The JSON's `assign` says which ran. Default:
    'auto'."""
    fused_passes: bool
    """rrr in the device loop: one fused pass per trial instead of five dispatches, where the state
    fits; the same iterates bit for bit. Default: False."""
    dc_map: str
    """The map between concur and divide. Default: 'rrr'."""
    weights: str
    """The constraint weights in the concur mean: uniform, or Elser's adaptive weights. Default:
    'uniform'."""
    gamma: float
    """The step of the adaptive weights. Default: 0.1."""
    layout: str
    """The constraints: hybrid (one global assignment constraint and the joins, the best measured)
    or plain (a constraint per cell, per piece and per join; the GPU's layout). Default:
    'hybrid'."""
    hybrid: bool | None
    """An alias of --layout hybrid, kept for older scripts and ladders (`hybrid = false` in a
    ladder means `layout = "plain"`). Default: not set."""
    readout: str
    """How the board is read out of the concur values: the per-cell argmax (the assignment readout
    on the last iteration of each round), or the max-weight assignment every iteration. Default:
    'argmax'."""
    propagate: float | None
    """Fold arc consistency in (the certain weight of the three-weight algorithm): once per round
    the candidates ruled out given the cells whose concur value reaches TAU, in (0, 1], are held
    at 0. Default: not set."""
    ac: str
    """The backtracker's propagation after each placement: forward checking, AC-3, AC-2001 or AC-4.
    Default: 'ac3'."""
    order: str
    """The backtracker's cell ordering: which open cell to branch on. Default: 'mrv-degree'."""
    restart_base: int
    """Nodes per Luby restart unit. Default: 256 (backtrack), 1048576 (scan)."""
    no_restarts: bool
    """No Luby restarts (a complete search). Default: False."""
    alldiff: str
    """The backtracker's all-different on pieces: values (a placed piece leaves every other domain)
    or regin (Régin's matching filter after each propagation: generalised arc consistency, Hall
    sets included). Default: 'values'."""
    sac: bool
    """The backtracker's root made singleton arc consistent before the search (not with --ac ac4).
    Default: False."""
    pc: bool
    """The backtracker's root made partially path consistent (the grid's triangles) before the
    search, after --sac when both are given (not with --ac ac4). Default: False."""
    blocks: bool
    """The backtracker keeps every 2x2 block consistent on colours after each propagation: the
    maintained form of the partial path consistency (not with --ac ac4). Default: False."""
    tree: str
    """The scan's tree of each restart: the smallest by Knuth's estimate, or one at random.
    Default: 'estimate'."""
    probes: int
    """The scan's random probes of Knuth's estimator per candidate tree. Default: 1000."""
    row_chain: bool
    """The scan's row-chain cut (the row under each placement must chain); it shrinks the tree by
    about a third on small boards but makes a node about 2.5 times dearer (BENCHMARKS.md).
    Default: False."""
    scan_walker: str
    """The scan's walker: fast, or table (the plain walker, the oracle of the fast one; both walk
    the same trees node for node). Default: 'fast'."""
    breaks: list[int]
    """The scan's break budget, Blackwood's "break indexes": the depths (0-based cells of the row
    scan) from which one more mismatched join is allowed, comma separated (default: none, the
    exact scan). Blackwood's 16x16 list is 201,206,211,216,221,225,229,233,237,239. Default: []."""
    plateau: int
    """Hill-climber: restart after this many moves without improvement (0: never). Default: 5000."""
    destroy_min: int
    """ALNS: the fewest cells one destroy removes. Default: 4."""
    destroy_max: int | None
    """ALNS: the most cells one destroy removes (default: a third of the board, 4..=48). Default:
    not set."""
    operators: list[str]
    """ALNS: the destroy operators to use, comma separated (default: all). Default: []."""
    no_exact_repair: bool
    """ALNS: no exact (assignment) refill of non-adjacent holes. Default: False."""
    restart_after: int
    """ALNS: restart from a new board after this many iterations without a new best (0: never).
    Default: 2000."""
    temperature: float
    """ALNS: the starting temperature of the annealing acceptance. Default: 1.5."""
    start: str | None
    """ALNS: polish this board instead of building one: a viewer link (e2.bucas.name or
    eternity2.dev), or a file holding one or a board in Brendan Owen's solution format (`solve
    -o`). A link with empty cells (a partial board) is completed greedily first, the rule the
    scan and the backtracker use for their best boards; with `--max-iters 0` that completion is
    all the run does. Default: not set."""
    width: int | None
    """Beam: partial boards kept at each cell (default: calibrated to the beam's share of the time
    limit, else 4,096). Default: not set."""
    fill_order: str
    """Beam: the order the cells are filled in. Default: 'comb'."""
    teeth: int
    """Beam: the comb's last rows, filled column by column. Default: 2."""
    children: int
    """Beam: the most children a partial board leaves (its best candidates, ties at random).
    Default: 4."""
    polish: float
    """Beam: the share of the run ALNS spends polishing the beam's board (0: none). Default: 0.3."""
    rounds: int
    """Beam: pipelines each thread runs one after another, each from a new seed and with an equal
    share of the time limit; the best board of them is kept. Default: 1."""


class F1MapOptions(TypedDict, total=False):
    """The options of concur.F1Map beyond its named arguments: rrr's and dm's."""

    time_limit: float | None
    """Wall-clock limit in seconds. Default: not set."""
    solutions: str | os.PathLike[str] | None
    """With --keep-going: append every solution to this file as one JSON line when it is found
    (flushed, so a killed run keeps every solution found). Default: not set."""
    no_cycle_restart: bool
    """Do not restart trials caught in exact limit cycles. Default: False."""
    all_trials: bool
    """Run every trial to its budget instead of stopping at the first solution (success rates and
    iteration quartiles). Default: False."""
    keep_going: bool
    """Rate mode: a solution does not end the run. Each solved trial's board is verified and
    recorded, and the trial goes on from a fresh point of its seeded stream, until --time-limit
    or every trial's --max-iters; the run reports its trial-iterations, every solution, and how
    many are distinct up to turning the board. Default: False."""
    complete: int | None
    """Arc-consistent completion: when a trial's best board has at most K mismatched joins (or
    stalls), free those cells plus a halo and search them with the backtracker. Default: not
    set."""
    complete_radius: int
    """The halo's radius around the mismatched cells of --complete. Default: 1."""
    complete_nodes: int
    """Node limit of one completion search. Default: 20000."""
    complete_stall: int
    """Iterations without improvement after which a trial's best board is completed. Default: 5000."""
    edge: str
    """F1's edge projection: the average per join (P_E), or one colour per join (P_E1). Default:
    'average'."""
    restart_stall: int
    """Restart a trial after this many iterations without a new best score since its last
    (re)start; 0 never restarts. It rescues the trials the weighted metric traps, at no measured
    cost (BENCHMARKS.md). Default: 100000."""
    kick: float | None
    """A stall restart perturbs x by S * (u - 1/2) per coordinate instead of drawing a fresh random
    point. Default: not set."""
    adapt: dict[str, float] | None
    """An adaptive metric on top of the join weights: a join's weight grows by RATE times its class
    weight in every iteration that leaves it unmatched, decays back by the fraction DECAY, and
    stays below MAX times its class weight. Default: not set."""
    cold_assign: bool
    """Solve every assignment cold instead of warm-starting from the previous duals. Default:
    False."""
    reduced_costs: str
    """The precision of the host assignments' potentials and reduced costs: f64 (the reference) or
    f32 (twice the lanes per vector; near-ties may break differently). Default: 'f64'."""
    assign: str
    """Where rrr's and dm's assignments are solved: auto (the backend's fastest measured: gpu-jv on
    the GPU, the host's JV where the run needs the host every iteration), cpu (the host's exact
    JV; the reference), gpu-jv (alias gpu: the device's exact shortest augmenting paths, a
    workgroup per problem), gpu-jv-sg (a subgroup per problem), gpu-jv-sg-staged (each problem's
    costs in workgroup memory) or gpu-auction. The JSON's `assign` says which ran. Default:
    'auto'."""
    fused_passes: bool
    """rrr in the device loop: one fused pass per trial instead of five dispatches, where the state
    fits; the same iterates bit for bit. Default: False."""


class DcMapOptions(TypedDict, total=False):
    """The options of concur.DcMap beyond its named arguments: dc's."""

    time_limit: float | None
    """Wall-clock limit in seconds. Default: not set."""
    adapter: str | None
    """The GPU adapter: the first whose name contains this (case-insensitive); `all`: every
    hardware adapter, a batch's trials split over them. Default: not set."""
    solutions: str | os.PathLike[str] | None
    """With --keep-going: append every solution to this file as one JSON line when it is found
    (flushed, so a killed run keeps every solution found). Default: not set."""
    no_cycle_restart: bool
    """Do not restart trials caught in exact limit cycles. Default: False."""
    all_trials: bool
    """Run every trial to its budget instead of stopping at the first solution (success rates and
    iteration quartiles). Default: False."""
    keep_going: bool
    """Rate mode: a solution does not end the run. Each solved trial's board is verified and
    recorded, and the trial goes on from a fresh point of its seeded stream, until --time-limit
    or every trial's --max-iters; the run reports its trial-iterations, every solution, and how
    many are distinct up to turning the board. Default: False."""
    complete: int | None
    """Arc-consistent completion: when a trial's best board has at most K mismatched joins (or
    stalls), free those cells plus a halo and search them with the backtracker. Default: not
    set."""
    complete_radius: int
    """The halo's radius around the mismatched cells of --complete. Default: 1."""
    complete_nodes: int
    """Node limit of one completion search. Default: 20000."""
    complete_stall: int
    """Iterations without improvement after which a trial's best board is completed. Default: 5000."""
    weights: str
    """The constraint weights in the concur mean: uniform, or Elser's adaptive weights. Default:
    'uniform'."""
    gamma: float
    """The step of the adaptive weights. Default: 0.1."""
    layout: str
    """The constraints: hybrid (one global assignment constraint and the joins, the best measured)
    or plain (a constraint per cell, per piece and per join; the GPU's layout). Default:
    'hybrid'."""
    hybrid: bool | None
    """An alias of --layout hybrid, kept for older scripts and ladders (`hybrid = false` in a
    ladder means `layout = "plain"`). Default: not set."""
    readout: str
    """How the board is read out of the concur values: the per-cell argmax (the assignment readout
    on the last iteration of each round), or the max-weight assignment every iteration. Default:
    'argmax'."""
    propagate: float | None
    """Fold arc consistency in (the certain weight of the three-weight algorithm): once per round
    the candidates ruled out given the cells whose concur value reaches TAU, in (0, 1], are held
    at 0. Default: not set."""
