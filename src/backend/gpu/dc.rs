//! placeholder
use super::context::GpuContext;
use crate::backend::{EngineError, GpuError};
use crate::dc::DcConfig;
use crate::map::{MapResult, Progress};
use crate::puzzle::Puzzle;
use std::sync::Arc;
pub fn supports(_cfg: &DcConfig) -> Result<(), GpuError> {
    Err(GpuError::Unsupported("dc".into()))
}
pub fn solve(
    _ctx: &Arc<GpuContext>,
    _p: &Puzzle,
    _c: &DcConfig,
    _pr: &mut dyn FnMut(&Progress),
) -> Result<MapResult, EngineError> {
    Err(GpuError::Unsupported("dc".into()).into())
}
