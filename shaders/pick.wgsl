// The answer of a batched assignment as F1 takes it (shared by the device JV and the
// auction): per cell, the index of its chosen entry in the trial's flat weights. One thread
// per (trial, row). A row without an answer (its problem failed, and the trial restarts)
// takes its first entry, so that every index stays in bounds.
//
// rows_out[t * rtot + r] is row r's column (NONE when unsolved); row_cell[r] is the row's
// cell and the offset of its row in the trial's flat weights (class offset + i * n).

struct Params {
    trials: u32,
    rtot: u32,
    cells: u32,
    pad: u32,
}

const NONE: u32 = 0xffffffffu;
const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> rows_out: array<u32>;
@group(0) @binding(2) var<storage, read> row_cell: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> sel: array<u32>;

@compute @workgroup_size(256)
fn pick(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>) {
    let idx = gid.x + gid.y * ng.x * WG;
    if idx >= P.trials * P.rtot {
        return;
    }
    let t = idx / P.rtot;
    let rc = row_cell[idx % P.rtot];
    let r = rows_out[idx];
    sel[t * P.cells + rc.x] = rc.y + select(r, 0u, r == NONE);
}
