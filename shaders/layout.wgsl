// Moving per-trial state between the host's trial-major order (element e of trial t at
// t * per + e) and the device's trial-minor order (at e * trials + t), 32-bit words.
//
//   scatter  a block of `count` trials, trial-major in `src`, into trials first.. of `dst`
//   gather   every trial of `src` (trial-minor) into `dst`, trial-major
//   copy     the first `count` words of `src` into `dst`, one per thread: the bench's
//            yardstick of device memory bandwidth as a kernel sees it
//
// CPU reference: the index arithmetic itself (tests/gpu.rs compares round trips).

struct Params {
    trials: u32,
    per: u32,
    first: u32,
    count: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= P.count * P.per) {
        return;
    }
    let t = i / P.per;
    let e = i - t * P.per;
    dst[e * P.trials + P.first + t] = src[i];
}

@compute @workgroup_size(256)
fn gather(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= P.trials * P.per) {
        return;
    }
    // Output order: consecutive threads write consecutive words.
    let t = i / P.per;
    let e = i - t * P.per;
    dst[i] = src[e * P.trials + t];
}

@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.count) {
        dst[i] = src[i];
    }
}
