// Per-trial fingerprint of a float state, for exact limit-cycle detection on the device
// (CPU counterpart: `batch::fingerprint`, FNV-1a in src/batch.rs, whose role it takes; the
// values differ, the cycle rule that reads them, `batch::Trial::in_cycle`, is the same).
//
// Each element's bits, mixed with its index, are added into two 32-bit sums per trial.
// Addition commutes, so the result does not depend on the order the threads run in: the same
// state always gives the same pair, and a changed element changes it with high probability.

struct Params {
    trials: u32,
    len: u32,
    // 1: the state is trial-minor (element e of trial t at e * trials + t), else trial-major.
    minor: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> state: array<f32>;
@group(0) @binding(2) var<storage, read_write> sums: array<atomic<u32>>;

fn mix32(v: u32) -> u32 {
    var z = v;
    z = (z ^ (z >> 16u)) * 0x7feb352du;
    z = (z ^ (z >> 15u)) * 0x846ca68bu;
    return z ^ (z >> 16u);
}

@compute @workgroup_size(256)
fn fingerprint(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= P.trials * P.len) {
        return;
    }
    var t = i / P.len;
    var e = i - t * P.len;
    if (P.minor == 1u) {
        e = i / P.trials;
        t = i - e * P.trials;
    }
    let b = bitcast<u32>(state[i]);
    atomicAdd(&sums[2u * t], mix32(b ^ mix32(e)));
    atomicAdd(&sums[2u * t + 1u], mix32(b + 0x9e3779b9u * (e + 1u)));
}
