// The workgroup variant of jv.wgsl's entry point and `reduce_min` (appended to it by
// src/backend/gpu/jv.rs, `source(false)`).
// The workgroup's smallest (value, key) into ctl_min and ctl_col (read them with
// workgroupUniformLoad). Workgroup memory: a tree over the threads.
fn reduce_min(lid: u32, val: f32, key: u32) {
    red_v[lid] = val;
    red_k[lid] = key;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s /= 2u) {
        if lid < s && before(red_v[lid + s], red_k[lid + s], red_v[lid], red_k[lid]) {
            red_v[lid] = red_v[lid + s];
            red_k[lid] = red_k[lid + s];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        ctl_min = red_v[0];
        ctl_col = red_k[0];
    }
}

@compute @workgroup_size(64)
fn jv(@builtin(workgroup_id) gid: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
      @builtin(local_invocation_index) lid: u32) {
    jv_problem(gid, ng, lid);
}
