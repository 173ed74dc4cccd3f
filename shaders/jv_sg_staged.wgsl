// The staged variant of jv_sg.wgsl's `stage_block` (appended to it by
// src/backend/gpu/jv.rs, `--assign gpu-jv-sg-staged`): the cost block once into this
// subgroup's slot of `blk`; its lanes then read one another's entries.
fn stage_block(sgi: u32, lane: u32, S: u32, n: u32, wbase: u32) {
    sbase = sgi * SN * SN;
    for (var e = lane; e < n * n; e += S) {
        blk[sbase + e] = w[wbase + e];
    }
    subgroupBarrier();
}
