// The unstaged variant of jv_sg.wgsl's `stage_block` (appended to it by
// src/backend/gpu/jv.rs): the cost block is read from storage where it lies.
fn stage_block(sgi: u32, lane: u32, S: u32, n: u32, wbase: u32) {}
