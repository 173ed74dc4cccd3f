// The subgroup variant of jv.wgsl's entry point and `reduce_min` (appended to it by
// src/backend/gpu/jv.rs, `source(true)`, on a device with subgroup operations).
var<private> sg_lane: u32;
var<private> sg_id: u32;
var<private> sg_count: u32;

// The workgroup's smallest (value, key) into ctl_min and ctl_col (read them with
// workgroupUniformLoad). Subgroup minima, then one entry per subgroup in workgroup memory.
fn reduce_min(lid: u32, val: f32, key: u32) {
    let bv = subgroupMin(val);
    let bk = subgroupMin(select(NONE, key, val == bv));
    if sg_lane == 0u {
        red_v[sg_id] = bv;
        red_k[sg_id] = bk;
    }
    workgroupBarrier();
    if lid == 0u {
        var mv = red_v[0];
        var mk = red_k[0];
        for (var s = 1u; s < sg_count; s++) {
            if before(red_v[s], red_k[s], mv, mk) {
                mv = red_v[s];
                mk = red_k[s];
            }
        }
        ctl_min = mv;
        ctl_col = mk;
    }
}

@compute @workgroup_size(64)
fn jv(@builtin(workgroup_id) gid: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
      @builtin(local_invocation_index) lid: u32,
      @builtin(subgroup_invocation_id) sgl: u32, @builtin(subgroup_id) sgi: u32,
      @builtin(num_subgroups) sgn: u32) {
    sg_lane = sgl;
    sg_id = sgi;
    sg_count = sgn;
    jv_problem(gid, ng, lid);
}
